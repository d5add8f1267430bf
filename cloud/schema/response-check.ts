// Checks what the cloud really sends against the route table (./routes.ts), as fastify's response
// schemas do: the status must be declared for the route (or be one any route may give), a JSON body
// must fit its declared shape, an error's code must be a catalog code with that status, and a
// response declared without a body must have none. Enabled by the tests on every cloud they start
// (test/helpers/cloud.ts), so /openapi.json cannot drift from what the server sends.
import type { TSchema } from '@sinclair/typebox';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { ERROR_CATALOG, type ErrorCode } from '../errors.ts';
import { ErrorBody } from './api.ts';
import { ANY_ROUTE_RESPONSES, ROUTES, routePattern, type ResponseSpec, type RouteSpec } from './routes.ts';
import { checker, describeProblem, type Checker } from './validator.ts';

interface CompiledRoute {
  route: RouteSpec;
  pattern: RegExp;
  checks: Map<TSchema, Checker<TSchema>>;
}

const checks = new Map<TSchema, Checker<TSchema>>();
const checkOf = (schema: TSchema) => {
  let c = checks.get(schema);
  if (!c) checks.set(schema, (c = checker(schema)));
  return c;
};

const COMPILED: CompiledRoute[] = ROUTES.map((route) => ({ route, pattern: routePattern(route.path), checks }));

/** What is wrong with one response, or undefined when it fits its declaration. */
export function responseViolation(method: string, url: string, status: number, headers: Record<string, unknown>, body: Buffer): string | undefined {
  const path = url.split('?', 1)[0]!;
  const what = `${method} ${path} → ${status}`;
  const route = COMPILED.find((c) => c.pattern.test(path) && (c.route.method === method.toLowerCase() || (method === 'HEAD' && c.route.method === 'get')))?.route;
  const spec: ResponseSpec | undefined = route?.responses[String(status)] ?? ANY_ROUTE_RESPONSES[String(status)];
  if (!spec) return `${what}: status not declared for ${route ? `${route.method.toUpperCase()} ${route.path}` : 'an unknown route'}`;
  if (method === 'HEAD') return undefined;
  const type = String(headers['content-type'] ?? '');
  if (spec.binary) return type === 'application/octet-stream' ? undefined : `${what}: expected application/octet-stream, got ${JSON.stringify(type)}`;
  if (spec.media) return type.startsWith(spec.media) ? undefined : `${what}: expected ${spec.media}, got ${JSON.stringify(type)}`;
  if (!spec.schema) return body.length === 0 ? undefined : `${what}: declared without a body, got ${body.length} bytes`;
  if (!type.startsWith('application/json')) return `${what}: expected application/json, got ${JSON.stringify(type)}`;
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return `${what}: the body is not JSON`;
  }
  const check = checkOf(spec.schema);
  if (!check(value)) return `${what}: ${check.problems().slice(0, 3).map((p) => describeProblem(p, 'body')).join('; ')}`;
  if (spec.schema === ErrorBody) {
    const code = (value as { error: ErrorCode }).error;
    if (ERROR_CATALOG[code].status !== status) return `${what}: error ${code} has status ${ERROR_CATALOG[code].status} in the catalog`;
  }
  return undefined;
}

/**
 * Watches every response of `server` (also those answered on `checkContinue`) and reports each one
 * that does not fit its declaration. Answers written on the raw socket (transport.ts) are not seen:
 * they are catalog errors built in one place.
 */
export function watchResponses(server: Server, onViolation: (violation: string) => void): void {
  const hook = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    };
    const write = res.write;
    const end = res.end;
    const writeHead = res.writeHead;
    // Headers given to writeHead are not in getHeaders(): keep them.
    let written: Record<string, unknown> = {};
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      const h = args.find((a, i) => i > 0 && a !== null && typeof a === 'object');
      if (h && !Array.isArray(h)) written = Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['writeHead'];
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse['write'];
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse['end'];
    res.once('finish', () => {
      const v = responseViolation(req.method ?? 'GET', req.url ?? '/', res.statusCode, { ...res.getHeaders(), ...written }, Buffer.concat(chunks));
      if (v) onViolation(v);
    });
  };
  server.prependListener('request', hook);
  server.prependListener('checkContinue', hook);
}
