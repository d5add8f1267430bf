// A small method + path router for the device-local API: patterns like /api/clients/{uuid}.
import type { HttpRequest, HttpResponse } from '../../hal/network.ts';

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

  /** The handler and params for a request; `methods` lists what the path allows when none matches. */
  match(method: string, path: string): { handler: RouteHandler; params: Record<string, string> } | { methods: string[] } {
    const parts = path.split('/').slice(1);
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

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const v = parts[i]!;
    if (p.startsWith('{') && p.endsWith('}')) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(v);
      } catch {
        return null;
      }
      if (decoded === '') return null;
      params[p.slice(1, -1)] = decoded;
    } else if (p !== v) {
      return null;
    }
  }
  return params;
}
