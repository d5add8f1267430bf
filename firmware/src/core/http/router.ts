// Method + path matching for the device-local API over a static route table: patterns like
// /api/clients/{uuid}, compared with the request path segment by segment.
//
// The table is a module constant (api.ts): preloaded, it is in flash on a device, so the routes cost
// no slots of the slot heap, and matching makes no per-route arrays or objects (docs/firmware-bench.md).
//
// The platform hands the path over still percent-encoded (hal/network.ts); this is the one place it
// is decoded: split on "/" first, then each segment decoded exactly once. So "%2F" inside a segment
// never splits it, and "%252e" stays the three characters "%2e" (never "."): a route parameter is
// never decoded twice. The handlers validate what they get (ids.ts for UUIDs).
import { errors } from '../errors.ts';

/** One entry of a route table: `pattern` starts with "/"; a segment `{name}` is a parameter. */
export interface Route {
  readonly method: string;
  readonly pattern: string;
}

/**
 * The first route of `routes` for the request, with its params; `methods` lists, in table order,
 * what the path allows when none matches. Throws 400 `invalid_path` when a segment is not valid
 * percent-encoded UTF-8.
 */
export function matchRoute<R extends Route>(routes: readonly R[], method: string, path: string): { route: R; params: Record<string, string> } | { methods: string[] } {
  const parts = decodeSegments(path);
  const allowed: string[] = [];
  for (const route of routes) {
    const params = matchPattern(route.pattern, parts);
    if (!params) continue;
    if (route.method === method) return { route, params };
    allowed.push(route.method);
  }
  return { methods: allowed };
}

/** The path's segments, each percent-decoded once. */
export function decodeSegments(path: string): string[] {
  return path
    .split('/')
    .slice(1)
    .map((segment) => {
      if (!segment.includes('%')) return segment;
      try {
        return decodeURIComponent(segment);
      } catch {
        throw errors.badRequest('invalid_path', 'The request path is not valid percent-encoded UTF-8');
      }
    });
}

/** The params when `parts` has the pattern's segments (a parameter matches any non-empty one), else null. */
function matchPattern(pattern: string, parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {};
  let start = 1; // the pattern's current segment is pattern[start, end)
  for (const part of parts) {
    if (start > pattern.length) return null; // the path has more segments
    let end = pattern.indexOf('/', start);
    if (end < 0) end = pattern.length;
    if (pattern[start] === '{' && pattern[end - 1] === '}') {
      if (part === '') return null;
      params[pattern.slice(start + 1, end - 1)] = part;
    } else if (end - start !== part.length || !pattern.startsWith(part, start)) {
      return null;
    }
    start = end + 1;
  }
  return start > pattern.length ? params : null; // else the pattern has more segments
}
