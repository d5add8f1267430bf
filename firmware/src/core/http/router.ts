// A small method + path router for the device-local API: patterns like /api/clients/{uuid}.
//
// The platform hands the path over still percent-encoded (hal/network.ts); this is the one place it
// is decoded: split on "/" first, then each segment decoded exactly once. So "%2F" inside a segment
// never splits it, and "%252e" stays the three characters "%2e" (never "."): a route parameter is
// never decoded twice. The handlers validate what they get (ids.ts for UUIDs).
import type { HttpRequest, HttpResponse } from '../../hal/network.ts';
import { errors } from './errors.ts';

export type RouteHandler = (req: HttpRequest, params: Record<string, string>) => Promise<HttpResponse>;

interface Route {
  method: string;
  segments: string[];
  handler: RouteHandler;
}

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: RouteHandler): this {
    this.routes.push({ method, segments: pattern.split('/').slice(1), handler });
    return this;
  }

  /**
   * The handler and params for a request; `methods` lists what the path allows when none matches.
   * Throws 400 `invalid_path` when a segment is not valid percent-encoded UTF-8.
   */
  match(method: string, path: string): { handler: RouteHandler; params: Record<string, string> } | { methods: string[] } {
    const parts = decodeSegments(path);
    const allowed: string[] = [];
    for (const route of this.routes) {
      const params = matchSegments(route.segments, parts);
      if (!params) continue;
      if (route.method === method) return { handler: route.handler, params };
      allowed.push(route.method);
    }
    return { methods: allowed };
  }
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

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const v = parts[i]!;
    if (p.startsWith('{') && p.endsWith('}')) {
      if (v === '') return null;
      params[p.slice(1, -1)] = v;
    } else if (p !== v) {
      return null;
    }
  }
  return params;
}
