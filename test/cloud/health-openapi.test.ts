// GET /health (always 200, no authorizer) and GET /openapi.json, checked against the routes that
// exist and against the error catalog.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG, TRANSPORT_ERROR_CODES, type ErrorCode } from '../../cloud/errors.ts';
import { openApiDocument } from '../../cloud/openapi.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

let cloud: TestCloud;
beforeAll(async () => {
  cloud = await startTestCloud();
});
afterAll(() => cloud.close());

/** Every (METHOD, /path/{param}) the Express app routes, read from its router. */
function expressRoutes(): Set<string> {
  const out = new Set<string>();
  const walk = (stack: unknown[]) => {
    for (const layer of stack as { route?: { path: string; methods: Record<string, boolean> }; handle?: { stack?: unknown[] } }[]) {
      if (layer.route) {
        const path = layer.route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
        for (const [m, on] of Object.entries(layer.route.methods)) if (on && m !== '_all') out.add(`${m.toUpperCase()} ${path}`);
      } else if (layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((cloud.cloud.app as unknown as { router: { stack: unknown[] } }).router.stack);
  return out;
}

function documentedRoutes(): Set<string> {
  const out = new Set<string>();
  for (const [path, ops] of Object.entries(openApiDocument.paths)) for (const m of Object.keys(ops)) out.add(`${m.toUpperCase()} ${path}`);
  return out;
}

describe('GET /health', () => {
  it('answers 200 without any authorization', async () => {
    const res = await fetch(`${cloud.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json() as any).toMatchObject({ status: 'ok', store: { kind: 'sqlite', state: 'ok' }, worker: 1, workers: 1 });
  });

  it('still answers 200 when the store is failing, and says so', async () => {
    const store = new SqliteStore(':memory:');
    const sick = await startTestCloud({ store });
    try {
      await store.close();
      const res = await fetch(`${sick.url}/health`);
      expect(res.status).toBe(200);
      expect(await res.json() as any).toMatchObject({ status: 'ok', store: { state: 'failing' } });
    } finally {
      await sick.close();
    }
  });
});

describe('GET /openapi.json', () => {
  it('is served as OpenAPI 3.1', async () => {
    const res = await fetch(`${cloud.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await res.json() as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/ota/{class}/{product_hex}/{application}'].get).toBeDefined();
  });

  it('documents exactly the routes the app has', () => {
    expect(expressRoutes().size).toBeGreaterThanOrEqual(17);
    expect([...documentedRoutes()].sort()).toEqual([...expressRoutes()].sort());
  });

  it('every documented route is really answered (not the catch-all 404)', async () => {
    for (const route of documentedRoutes()) {
      const [method, path] = route.split(' ') as [string, string];
      const concrete = path
        .replace('{class}', 'ctl')
        .replace('{product_hex}', '0x00000001')
        .replace('{application}', 'ctl')
        .replace('{version}', '2026.01.01')
        .replace('{uuid}', 'dev-1')
        .replace('{function_name}', 'svc-func-ota');
      const res = await cloud.admin(method, concrete);
      const body = res.status === 204 || res.status === 304 ? null : await res.json().catch(() => null) as any;
      expect(body?.error, route).not.toBe('route_not_found');
      expect(body?.error, route).not.toBe('method_not_allowed');
    }
  });

  it('lists exactly the error codes of the catalog', () => {
    const documented = openApiDocument.components.schemas.ErrorCode!.enum as string[];
    expect([...documented].sort()).toEqual(Object.keys(ERROR_CATALOG).sort());
  });

  it('every status of the catalog appears among the documented responses', () => {
    const statuses = new Set<string>();
    for (const ops of Object.values(openApiDocument.paths)) for (const op of Object.values(ops)) for (const s of Object.keys(op.responses)) statuses.add(s);
    for (const [code, { status }] of Object.entries(ERROR_CATALOG)) {
      if (TRANSPORT_ERROR_CODES.includes(code as ErrorCode)) continue; // documented once, in info.description
      expect(statuses.has(String(status)), `${code} ${status}`).toBe(true);
    }
  });
});

describe('malformed requests', () => {
  it.each(['/ota/%E0%A4%A/x/y', '/devices/%E0%A4%A/backup'])('a path segment that is not valid percent-encoding (%s) is a 400, not a 500', async (path) => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(cloud.url + path, { method });
      expect(res.status).toBe(400);
      if (method === 'GET') expect((await res.json() as any).error).toBe('bad_request');
    }
    expect(cloud.logs.filter((l) => l.level === 'ERROR')).toEqual([]);
  });
});

describe('unknown routes', () => {
  it('answer 404 route_not_found as JSON', async () => {
    const res = await fetch(`${cloud.url}/does/not/exist`);
    expect(res.status).toBe(404);
    expect(await res.json() as any).toEqual({ error: 'route_not_found', message: 'No such route', details: { method: 'GET', path: '/does/not/exist' } });
  });
});
