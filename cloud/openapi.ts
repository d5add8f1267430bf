// The OpenAPI 3.1 description of the cloud API, served at GET /openapi.json. Written by hand as the
// API's documentation; test/cloud/openapi.test.ts checks it against the routes the app really has and
// against the error catalog.
import { PACKAGE_VERSION } from './version.ts';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ref('Error') } },
});
const jsonResponse = (description: string, schema: unknown) => ({ description, content: { 'application/json': { schema } } });
const pathParam = (name: string, description: string, pattern?: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: pattern ? { type: 'string', pattern } : { type: 'string' },
});

const trackParams = [
  pathParam('class', 'Hardware class', '^[A-Za-z0-9._-]{1,64}$'),
  pathParam('product_hex', 'Product identifier, 0x and 8 hex digits (case-insensitive)', '^0x[0-9a-fA-F]{8}$'),
  pathParam('application', 'Application; equals class for the main application', '^[A-Za-z0-9._-]{1,64}$'),
];
const uuidParam = pathParam('uuid', 'Device UUID', '^[A-Za-z0-9._:-]{1,64}$');
const functionParam = pathParam('function_name', 'Cloud function, starts with svc-func-');
const versionParam = pathParam('version', 'Firmware version YYYY.MM.bb', '^\\d{4}\\.\\d{2}\\.\\d{2}$');

const deviceSignatureHeaders = [
  { name: 'X-Device-UUID', in: 'header', required: true, schema: { type: 'string' }, description: 'Must equal {uuid}' },
  { name: 'X-Device-Nonce', in: 'header', required: true, schema: { type: 'string' }, description: 'Base64 of 32 random bytes, never reused' },
  { name: 'X-Device-Timestamp', in: 'header', required: true, schema: { type: 'string' }, description: 'ISO 8601 UTC ending in Z; accepted within ±300 s' },
  {
    name: 'X-Device-Signature',
    in: 'header',
    required: true,
    schema: { type: 'string' },
    description: 'Base64 DER ECDSA P-256 signature, SHA-256 over nonce bytes || UTF-8 timestamp',
  },
];
const signatureErrors = {
  '400': errorResponse('Missing or invalid headers, or invalid Base64'),
  '401': errorResponse('Unknown device, invalid signature, timestamp outside the window, or replayed nonce'),
  '403': errorResponse('X-Device-UUID differs from {uuid}'),
};
const superUserErrors = {
  '401': errorResponse('Missing or invalid bearer token'),
  '403': errorResponse('Caller is not a super user'),
};
const bearer = [{ bearerAuth: [] }];

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Device fleet cloud API',
    version: PACKAGE_VERSION,
    description:
      'Firmware update check, encrypted device backups, runtime configuration of the cloud functions, health, and the admin API. Every error body is {"error": code, "message": text, "details"?: object}. Any route may also answer 400 bad_request or body_not_allowed, 404 route_not_found, 405 method_not_allowed (with Allow), 408 request_timeout, 417 expectation_failed or 431 header_too_large (docs/cloud-limits.md), and 503 store_saturated with Retry-After when the store or the upload gate is saturated (docs/fleet-scale.md).',
  },
  servers: [{ url: 'http://127.0.0.1:8080' }],
  paths: {
    '/health': {
      get: {
        operationId: 'health',
        summary: 'Health check; no authorizer, always 200',
        responses: { '200': jsonResponse('Alive', ref('Health')) },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        summary: 'This document',
        responses: { '200': jsonResponse('The OpenAPI document', { type: 'object' }) },
      },
    },
    '/ota/{class}/{product_hex}/{application}': {
      get: {
        operationId: 'otaCheck',
        summary: 'The next firmware version to install (sequential upgrades; REVOKED never offered)',
        parameters: [
          ...trackParams,
          {
            name: 'current_version',
            in: 'query',
            required: false,
            schema: { type: 'string', pattern: '^\\d{4}\\.\\d{2}\\.\\d{2}$' },
            description: 'Without it, the list of all RELEASED versions is returned',
          },
        ],
        responses: {
          '200': jsonResponse('The manifest of the next (or the current) version, or {"versions": [...]} without current_version', {
            oneOf: [ref('Manifest'), ref('VersionList')],
          }),
          '400': errorResponse('Invalid product_hex, class, application or current_version'),
          '404': errorResponse('No RELEASED firmware for the triple, or an unknown current_version with nothing newer'),
          '409': errorResponse('current_version is REVOKED and nothing newer is RELEASED'),
        },
      },
    },
    '/devices/{uuid}/backup': {
      post: {
        operationId: 'putBackup',
        summary: 'Store the encrypted backup (FFCE blob) of a device',
        parameters: [
          uuidParam,
          ...deviceSignatureHeaders,
          { name: 'ETag', in: 'header', required: false, schema: { type: 'string' }, description: 'Plaintext SHA-256 hex, stored as metadata' },
          {
            name: 'If-None-Match',
            in: 'header',
            required: false,
            schema: { type: 'string' },
            description: 'Evaluated only with ETag: equal to the stored ETag gives 304 and nothing is written',
          },
        ],
        requestBody: {
          required: true,
          content: { 'application/octet-stream': { schema: { type: 'string', contentEncoding: 'binary', maxLength: 524288 } } },
        },
        responses: {
          '200': jsonResponse('Stored', ref('BackupStored')),
          '304': { description: 'Unchanged: nothing written' },
          ...signatureErrors,
          '400': errorResponse('Missing or invalid headers, invalid Base64, wrong Content-Type, or body not FFCE'),
          '413': errorResponse('Body over 524288 bytes'),
          '500': errorResponse('Unhandled exception'),
        },
      },
      get: {
        operationId: 'getBackup',
        summary: 'Fetch the stored blob with its ETag and Last-Modified',
        parameters: [
          uuidParam,
          ...deviceSignatureHeaders,
          { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
        ],
        responses: {
          '200': { description: 'The FFCE blob', content: { 'application/octet-stream': { schema: { type: 'string', contentEncoding: 'binary' } } } },
          '304': { description: 'The stored ETag matches If-None-Match' },
          ...signatureErrors,
          '404': errorResponse('No backup stored'),
        },
      },
      delete: {
        operationId: 'deleteBackup',
        summary: 'Delete the stored backup',
        parameters: [uuidParam, ...deviceSignatureHeaders],
        responses: { '204': { description: 'Deleted' }, ...signatureErrors, '404': errorResponse('No backup stored') },
      },
    },
    '/appconfig': {
      get: {
        operationId: 'listAppConfig',
        summary: 'Runtime configuration of every cloud function',
        security: bearer,
        responses: { '200': jsonResponse('All functions', ref('FunctionConfigList')), ...superUserErrors },
      },
    },
    '/appconfig/{function_name}': {
      get: {
        operationId: 'getAppConfig',
        summary: 'Staged, deployed and effective configuration of one function',
        security: bearer,
        parameters: [functionParam],
        responses: {
          '200': jsonResponse('The function', ref('FunctionConfig')),
          ...superUserErrors,
          '400': errorResponse('Name does not start with svc-func-'),
          '404': errorResponse('Function does not exist'),
        },
      },
      patch: {
        operationId: 'stageAppConfig',
        summary: 'Stage a new configuration; it is not deployed',
        security: bearer,
        parameters: [functionParam],
        requestBody: { required: true, content: { 'application/json': { schema: ref('Configuration') } } },
        responses: {
          '200': jsonResponse('Staged', ref('FunctionConfig')),
          ...superUserErrors,
          '400': errorResponse('Invalid name, invalid log level (details list the allowed levels), unknown key or invalid JSON'),
          '404': errorResponse('Function does not exist'),
          '413': errorResponse('Body over 64 KB'),
          '415': errorResponse('Body is not application/json'),
        },
      },
      delete: {
        operationId: 'deleteAppConfig',
        summary: 'Remove the configuration; the function reverts to WARNING',
        security: bearer,
        parameters: [functionParam],
        responses: {
          '204': { description: 'Removed' },
          ...superUserErrors,
          '400': errorResponse('Name does not start with svc-func-'),
          '404': errorResponse('Function or configuration not found'),
          '409': errorResponse('A deployment is in progress'),
        },
      },
    },
    '/appconfig/{function_name}/deploy': {
      post: {
        operationId: 'deployAppConfig',
        summary: 'Deploy the latest staged version; it applies at once, then bakes for APPCONFIG_DEPLOY_SECONDS',
        security: bearer,
        parameters: [functionParam],
        responses: {
          '202': jsonResponse('Deployment started', ref('FunctionConfig')),
          ...superUserErrors,
          '400': errorResponse('Name does not start with svc-func-'),
          '404': errorResponse('Function does not exist, or no staged version'),
          '409': errorResponse('A deployment is already in progress'),
        },
      },
    },
    '/admin/devices': {
      get: {
        operationId: 'listDevices',
        summary: 'Enrolled devices',
        security: bearer,
        responses: { '200': jsonResponse('Devices', { type: 'object', properties: { devices: { type: 'array', items: ref('Device') } } }), ...superUserErrors },
      },
    },
    '/admin/devices/{uuid}': {
      get: {
        operationId: 'getDevice',
        summary: 'One device, with its backup metadata',
        security: bearer,
        parameters: [uuidParam],
        responses: { '200': jsonResponse('The device', ref('Device')), ...superUserErrors, '400': errorResponse('Invalid UUID'), '404': errorResponse('No such device') },
      },
      put: {
        operationId: 'enrollDevice',
        summary: 'Enroll (201) or re-enroll (200) a device with its P-256 public key',
        security: bearer,
        parameters: [uuidParam],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', required: ['public_key'], properties: { public_key: { type: 'string', description: 'PEM SPKI' } } } } },
        },
        responses: {
          '200': jsonResponse('Re-enrolled', ref('Device')),
          '201': jsonResponse('Enrolled', ref('Device')),
          ...superUserErrors,
          '400': errorResponse('Invalid UUID, JSON or public key'),
          '415': errorResponse('Body is not application/json'),
        },
      },
      delete: {
        operationId: 'removeDevice',
        summary: 'Remove a device (its stored backup is kept)',
        security: bearer,
        parameters: [uuidParam],
        responses: { '204': { description: 'Removed' }, ...superUserErrors, '400': errorResponse('Invalid UUID'), '404': errorResponse('No such device') },
      },
    },
    '/admin/firmware/{class}/{product_hex}/{application}': {
      get: {
        operationId: 'listFirmware',
        summary: 'Every version of a track, RELEASED and REVOKED, oldest first',
        security: bearer,
        parameters: trackParams,
        responses: { '200': jsonResponse('Versions', ref('VersionList')), ...superUserErrors, '400': errorResponse('Invalid track') },
      },
    },
    '/admin/firmware/{class}/{product_hex}/{application}/{version}': {
      put: {
        operationId: 'releaseFirmware',
        summary: 'Create a RELEASED version',
        security: bearer,
        parameters: [...trackParams, versionParam],
        requestBody: { required: false, content: { 'application/json': { schema: ref('ImageMetadata') } } },
        responses: {
          '201': jsonResponse('Released', ref('Manifest')),
          ...superUserErrors,
          '400': errorResponse('Invalid track, version or image metadata'),
          '409': errorResponse('The version exists'),
          '415': errorResponse('Body is not application/json'),
        },
      },
    },
    '/admin/firmware/{class}/{product_hex}/{application}/{version}/revoke': {
      post: {
        operationId: 'revokeFirmware',
        summary: 'Make a version REVOKED (idempotent)',
        security: bearer,
        parameters: [...trackParams, versionParam],
        responses: { '200': jsonResponse('Revoked', ref('Manifest')), ...superUserErrors, '400': errorResponse('Invalid track or version'), '404': errorResponse('No such version') },
      },
    },
  },
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    schemas: {
      Error: {
        type: 'object',
        required: ['error', 'message'],
        properties: { error: ref('ErrorCode'), message: { type: 'string' }, details: { type: 'object' } },
      },
      ErrorCode: {
        type: 'string',
        enum: [
          'route_not_found', 'bad_request', 'method_not_allowed', 'request_timeout', 'expectation_failed', 'header_too_large', 'body_not_allowed', 'store_saturated', 'invalid_json', 'invalid_body', 'unsupported_media_type', 'payload_too_large', 'invalid_uuid', 'internal_error',
          'missing_token', 'invalid_token', 'not_superuser',
          'invalid_product_hex', 'invalid_version', 'invalid_name', 'firmware_not_found', 'current_version_unknown', 'current_version_revoked',
          'missing_header', 'invalid_header', 'invalid_base64', 'invalid_content_type', 'invalid_backup_format', 'device_uuid_mismatch',
          'unknown_device', 'invalid_signature', 'timestamp_out_of_window', 'nonce_replayed', 'backup_too_large', 'backup_not_found',
          'invalid_function_name', 'function_not_found', 'invalid_log_level', 'unknown_configuration_key', 'no_staged_configuration',
          'configuration_not_found', 'deployment_in_progress',
          'invalid_public_key', 'device_not_found', 'release_exists', 'release_not_found', 'invalid_release_metadata',
        ],
      },
      Manifest: {
        type: 'object',
        required: ['class', 'product_hex', 'application', 'version', 'status', 'released_at'],
        properties: {
          class: { type: 'string' },
          product_hex: { type: 'string' },
          application: { type: 'string' },
          version: { type: 'string' },
          status: { enum: ['RELEASED', 'REVOKED'] },
          released_at: { type: 'string', format: 'date-time' },
          revoked_at: { type: 'string', format: 'date-time' },
          url: { type: 'string' },
          size: { type: 'integer' },
          sha256: { type: 'string' },
        },
      },
      VersionList: { type: 'object', required: ['versions'], properties: { versions: { type: 'array', items: ref('Manifest') } } },
      ImageMetadata: {
        type: 'object',
        additionalProperties: false,
        properties: { url: { type: 'string' }, size: { type: 'integer', minimum: 1 }, sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' } },
      },
      BackupStored: {
        type: 'object',
        required: ['message', 'last_backup_date'],
        properties: { message: { type: 'string' }, last_backup_date: { type: 'string', format: 'date-time' } },
      },
      Configuration: {
        type: 'object',
        additionalProperties: false,
        properties: { logging: { type: 'string', description: 'DEBUG, INFO, WARNING, ERROR or CRITICAL, any case' } },
      },
      FunctionConfig: {
        type: 'object',
        properties: {
          function_name: { type: 'string' },
          effective_level: { type: 'string' },
          staged: { type: ['object', 'null'] },
          deployed: { type: ['object', 'null'] },
          deployment: { type: ['object', 'null'], properties: { state: { enum: ['IN_PROGRESS', 'COMPLETE'] } } },
        },
      },
      FunctionConfigList: { type: 'object', properties: { functions: { type: 'array', items: ref('FunctionConfig') } } },
      Device: {
        type: 'object',
        properties: {
          uuid: { type: 'string' },
          public_key: { type: 'string' },
          enrolled_at: { type: 'string' },
          updated_at: { type: 'string' },
          backup: { type: ['object', 'null'] },
        },
      },
      Health: {
        type: 'object',
        required: ['status'],
        properties: { status: { const: 'ok' }, version: { type: 'string' }, uptime_seconds: { type: 'integer' }, store: { type: 'object' } },
      },
    },
  },
} as const;
