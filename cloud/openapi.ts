// GET /openapi.json: the OpenAPI 3.1 description of the cloud API, generated from the route table
// (cloud/schema/routes.ts) and the shapes it points at (cloud/schema/api.ts), never written by hand.
// A named shape (one with a `title` in COMPONENTS) appears once under components.schemas and as a
// $ref everywhere else. Every operation names its authorizer (docs/openapi-lint.md): the bearer JWT
// of the admin routes, the device signature headers of the backup routes, or none (`security: []`).
import { COMPONENTS as API_COMPONENTS, DeviceSignatureHeaders } from './schema/api.ts';
import { HEALTH_COMPONENTS } from './schema/health.ts';
import { ANY_ROUTE_RESPONSES, ROUTES, type ResponseSpec, type RouteSpec } from './schema/routes.ts';
import { PACKAGE_VERSION } from './version.ts';

type Json = Record<string, unknown>;

const COMPONENTS = { ...API_COMPONENTS, ...HEALTH_COMPONENTS };

const NAMED = new Set(Object.keys(COMPONENTS));

/** A plain JSON copy (TypeBox's symbols dropped) with every named sub-shape replaced by its $ref. */
function toJson(schema: unknown, root = true): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toJson(s, false));
  if (schema === null || typeof schema !== 'object') return schema;
  const title = (schema as Json).title;
  if (!root && typeof title === 'string' && NAMED.has(title)) return { $ref: `#/components/schemas/${title}` };
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) out[k] = toJson(v, false);
  return out;
}

function parameters(route: RouteSpec): Json[] {
  const out: Json[] = [];
  const add = (where: 'path' | 'query' | 'header', shape: RouteSpec['params']) => {
    if (!shape) return;
    const required = new Set(shape.required ?? []);
    for (const [name, schema] of Object.entries(shape.properties)) {
      const { description, ...rest } = toJson(schema) as Json;
      out.push({ name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest });
    }
  };
  add('path', route.params);
  add('query', route.query);
  add('header', route.headers);
  return out;
}

function response(spec: ResponseSpec): Json {
  if (spec.binary) return { description: spec.description, content: { 'application/octet-stream': { schema: { type: 'string', contentEncoding: 'binary' } } } };
  if (spec.media) return { description: spec.description, content: { [spec.media]: { schema: { type: 'string' } } } };
  if (!spec.schema) return { description: spec.description };
  return { description: spec.description, content: { 'application/json': { schema: toJson(spec.schema, false) } } };
}

/** The signature headers, each an apiKey scheme named after its header; a signed route needs all four. */
const SIGNATURE_HEADERS = Object.keys(DeviceSignatureHeaders.properties);

function securitySchemes(): Json {
  const signature = Object.fromEntries(
    Object.entries(DeviceSignatureHeaders.properties).map(([name, { description }]) => [
      name,
      { type: 'apiKey', in: 'header', name, description: `Device signature (ECDSA P-256 with the enrolled key); sent with the other X-Device-* headers. ${description ?? ''}`.trim() },
    ]),
  );
  return { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A super-user JWT (groups claim holds superuser)' }, ...signature };
}

function security(route: RouteSpec): Json[] {
  if (route.bearer) return [{ bearerAuth: [] }];
  const headers = Object.keys(route.headers?.properties ?? {});
  if (SIGNATURE_HEADERS.every((h) => headers.includes(h))) return [Object.fromEntries(SIGNATURE_HEADERS.map((h) => [h, []]))];
  return []; // no authorizer: health, this document, the OTA check
}

/** Answers any route may give (ANY_ROUTE_RESPONSES), as one response per status class. */
const ANY_ROUTE_CLASSES = ['4XX', '5XX'] as const;

function anyRouteResponses(): Json {
  return Object.fromEntries(
    ANY_ROUTE_CLASSES.map((range) => {
      const statuses = Object.entries(ANY_ROUTE_RESPONSES).filter(([status]) => status[0] === range[0]);
      return [
        `AnyRoute${range}`,
        { description: `Any route: ${statuses.map(([status, r]) => `${status} ${r.description}`).join('; ')}`, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      ];
    }),
  );
}

function operation(route: RouteSpec): Json {
  const op: Json = { operationId: route.operationId, summary: route.summary, security: security(route) };
  const params = parameters(route);
  if (params.length) op.parameters = params;
  if (route.body) {
    const content = route.body.json
      ? { 'application/json': { schema: toJson(route.body.json, false) } }
      : { 'application/octet-stream': { schema: { type: 'string', contentEncoding: 'binary', maxLength: route.body.binaryMaxBytes } } };
    op.requestBody = { required: route.body.required, content };
  }
  op.responses = {
    ...Object.fromEntries(Object.entries(route.responses).map(([status, spec]) => [status, response(spec)])),
    ...Object.fromEntries(ANY_ROUTE_CLASSES.map((range) => [range, { $ref: `#/components/responses/AnyRoute${range}` }])),
  };
  return op;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, Json> } & Json>>;
  components: { securitySchemes: Json; responses: Json; schemas: Record<string, Json> };
}

export function buildOpenApiDocument(): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const route of ROUTES) (paths[route.path] ??= {})[route.method] = operation(route) as OpenApiDocument['paths'][string][string];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Device fleet cloud API',
      version: PACKAGE_VERSION,
      description: `Firmware update check, encrypted device backups, runtime configuration of the cloud functions, health, and the admin API. Every error body is {"error": code, "message": text, "details"?: object}; a refused value is named in details (field, value, expected). Any route may also answer the statuses of components.responses AnyRoute4XX and AnyRoute5XX (docs/cloud-limits.md, docs/fleet-scale.md).`,
    },
    servers: [{ url: 'http://127.0.0.1:8080' }],
    paths,
    components: {
      securitySchemes: securitySchemes(),
      responses: anyRouteResponses(),
      schemas: Object.fromEntries(Object.entries(COMPONENTS).map(([name, schema]) => [name, toJson(schema) as Json])),
    },
  };
}

export const openApiDocument: OpenApiDocument = buildOpenApiDocument();
