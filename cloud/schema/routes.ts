// The cloud's routes as data: each one's parameters, headers, body and responses, pointing at the
// shapes of ./api.ts. GET /openapi.json is generated from this table (cloud/openapi.ts), the method
// guard reads its paths (cloud/transport.ts), and the tests check every answer against it
// (./response-check.ts).
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { productOtaSlotBytes } from '../../firmware/image/product-partitions.ts';
import { MAX_BACKUP_BYTES } from '../limits.ts';
import {
  AuditList,
  AuditQuery,
  BackupStored,
  ConfigurationPatch,
  ConsoleLogin,
  ConsoleSession,
  Device,
  DeviceGroupsBody,
  DeviceLabelBody,
  DeviceList,
  DeviceVersions,
  DeviceVersionsQuery,
  DeviceSignatureHeaders,
  EnrollBody,
  ErrorBody,
  EtagHeader,
  FunctionConfig,
  FunctionConfigList,
  FunctionParams,
  Health,
  HostedRelease,
  IfNoneMatchHeader,
  ImageMetadata,
  ImageReleaseQuery,
  InventoryQuery,
  RolloutDeviceList,
  RolloutDevicesQuery,
  Manifest,
  NewReleaseParams,
  OtaHeaders,
  OtaQuery,
  RangeHeaders,
  ReleaseList,
  ReleaseParams,
  Rollout,
  RolloutBody,
  TrackList,
  TrackParams,
  TrackSigning,
  TrackSigningBody,
  UuidParams,
  VersionList,
} from './api.ts';
import { DeviceHealthQuery, DeviceHealthTimeline, FleetHealth, FleetHealthQuery, HealthReport, HealthStored, ReleaseHealth } from './health.ts';
import { HEALTH_REPORT_MAX_BYTES, HEARTBEAT_MAX_BYTES } from '../health-definitions.ts';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseSpec {
  description: string;
  /** JSON body shape; absent with `binary` (octet-stream), `media` or for a response without a body. */
  schema?: TSchema;
  binary?: boolean;
  /** A text body of this media type (the console's page and assets). */
  media?: string;
}

export interface RouteSpec {
  method: Method;
  /** OpenAPI form: /ota/{class}/{product_hex}/{application} */
  path: string;
  operationId: string;
  summary: string;
  bearer?: boolean;
  params?: TObject;
  query?: TObject;
  headers?: TObject;
  body?: { required: boolean; json?: TSchema; binaryMaxBytes?: number };
  responses: Record<string, ResponseSpec>;
}

const error = (description: string): ResponseSpec => ({ description, schema: ErrorBody });
const json = (description: string, schema: TSchema): ResponseSpec => ({ description, schema });
const empty = (description: string): ResponseSpec => ({ description });

const signatureErrors = {
  '400': error('Missing or invalid headers, or invalid Base64'),
  '401': error('Unknown device, invalid signature, timestamp outside the window, or replayed nonce'),
  '403': error('X-Device-UUID differs from {uuid}'),
};
const superUserErrors = { '401': error('Missing or invalid bearer token, or a console session that ended or expired'), '403': error('Caller is not a super user') };
const withOptional = (base: TObject, extra: Record<string, TSchema>) =>
  Type.Object({ ...base.properties, ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, Type.Optional(v)])) });

/**
 * Answers any route may give, whatever its declaration (docs/cloud-limits.md, docs/fleet-scale.md):
 * documented once in the document's description, accepted by the response check for every route.
 */
export const ANY_ROUTE_RESPONSES: Record<string, ResponseSpec> = {
  '400': error('bad_request or body_not_allowed'),
  '404': error('route_not_found'),
  '405': error('method_not_allowed, with Allow'),
  '408': error('request_timeout'),
  '417': error('expectation_failed'),
  '431': error('header_too_large'),
  '500': error('internal_error'),
  '503': error('store_saturated, with Retry-After'),
};

/** A route path's matcher as Express matches it: case-insensitive, an optional trailing slash, `{x}` one segment. */
export function routePattern(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{[A-Za-z_]+\}/g, '[^/]+')}/?$`, 'i');
}

export const ROUTES: RouteSpec[] = [
  { method: 'get', path: '/health', operationId: 'health', summary: 'Health check; no authorizer, always 200', responses: { '200': json('Alive', Health) } },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document',
    responses: { '200': json('The OpenAPI document', Type.Object({}, { additionalProperties: true })) },
  },
  {
    method: 'get',
    path: '/ota/{class}/{product_hex}/{application}',
    operationId: 'otaCheck',
    summary: 'The next firmware version to install (sequential upgrades; REVOKED never offered)',
    params: TrackParams,
    query: OtaQuery,
    headers: OtaHeaders,
    responses: {
      '200': json('The manifest of the next (or the current) version, or {"versions": [...]} without current_version', Type.Union([Manifest, VersionList])),
      '400': error('Invalid product_hex, class, application or current_version'),
      '404': error('No RELEASED firmware for the triple, or an unknown current_version with nothing newer'),
      '409': error('current_version is REVOKED and nothing newer is RELEASED'),
    },
  },
  {
    method: 'get',
    path: '/images/{class}/{product_hex}/{application}/{version}.bin',
    operationId: 'getImage',
    summary: 'A hosted firmware image (the manifest url): ETag is its SHA-256; one byte range per request',
    params: ReleaseParams,
    headers: RangeHeaders,
    responses: {
      '200': { description: 'The whole image', binary: true },
      '206': { description: 'The range asked for, with Content-Range', binary: true },
      '304': empty('If-None-Match holds the ETag'),
      '400': error('Invalid track or version'),
      '404': error('No hosted image for this version, or it is REVOKED'),
      '416': error('The range is outside the image (Content-Range: bytes */size)'),
    },
  },
  {
    method: 'post',
    path: '/devices/{uuid}/backup',
    operationId: 'putBackup',
    summary: 'Store the encrypted backup (FFCE blob) of a device',
    params: UuidParams,
    headers: withOptional(DeviceSignatureHeaders, { etag: EtagHeader, 'if-none-match': IfNoneMatchHeader }),
    body: { required: true, binaryMaxBytes: MAX_BACKUP_BYTES },
    responses: {
      '200': json('Stored', BackupStored),
      '304': empty('Unchanged: nothing written'),
      ...signatureErrors,
      '400': error('Missing or invalid headers, invalid Base64, wrong Content-Type, or body not FFCE'),
      '413': error(`Body over ${MAX_BACKUP_BYTES} bytes`),
      '500': error('Unhandled exception'),
    },
  },
  {
    method: 'get',
    path: '/devices/{uuid}/backup',
    operationId: 'getBackup',
    summary: 'Fetch the stored blob with its ETag and Last-Modified',
    params: UuidParams,
    headers: withOptional(DeviceSignatureHeaders, { 'if-none-match': IfNoneMatchHeader }),
    responses: {
      '200': { description: 'The FFCE blob', binary: true },
      '304': empty('The stored ETag matches If-None-Match'),
      ...signatureErrors,
      '404': error('No backup stored'),
    },
  },
  {
    method: 'delete',
    path: '/devices/{uuid}/backup',
    operationId: 'deleteBackup',
    summary: 'Delete the stored backup',
    params: UuidParams,
    headers: DeviceSignatureHeaders,
    responses: { '204': empty('Deleted'), ...signatureErrors, '404': error('No backup stored') },
  },
  {
    method: 'post',
    path: '/devices/{uuid}/health',
    operationId: 'postHealthReport',
    summary: `Store one health report of a device: boot, heartbeat or update (docs/device-health.md); at most ${HEALTH_REPORT_MAX_BYTES} bytes, a heartbeat ${HEARTBEAT_MAX_BYTES}`,
    params: UuidParams,
    headers: DeviceSignatureHeaders,
    body: { required: true, json: HealthReport },
    responses: {
      '200': json('That seq was stored before: nothing stored again', HealthStored),
      '201': json('Stored', HealthStored),
      ...signatureErrors,
      '400': error('Missing or invalid headers, or a body that is not a report of its shape (invalid_health_report names the field)'),
      '401': error('Unknown device, invalid signature, timestamp outside the window, or replayed nonce: nothing stored'),
      '413': error(`Body over ${HEALTH_REPORT_MAX_BYTES} bytes (refused before it is read past that), or a heartbeat over ${HEARTBEAT_MAX_BYTES}`),
      '415': error('Body is not application/json'),
    },
  },
  {
    method: 'get',
    path: '/appconfig',
    operationId: 'listAppConfig',
    summary: 'Runtime configuration of every cloud function',
    bearer: true,
    responses: { '200': json('All functions', FunctionConfigList), ...superUserErrors },
  },
  {
    method: 'get',
    path: '/appconfig/{function_name}',
    operationId: 'getAppConfig',
    summary: 'Staged, deployed and effective configuration of one function',
    bearer: true,
    params: FunctionParams,
    responses: {
      '200': json('The function', FunctionConfig),
      ...superUserErrors,
      '400': error('Name does not start with svc-func-'),
      '404': error('Function does not exist'),
    },
  },
  {
    method: 'patch',
    path: '/appconfig/{function_name}',
    operationId: 'stageAppConfig',
    summary: 'Stage a new configuration; it is not deployed',
    bearer: true,
    params: FunctionParams,
    body: { required: true, json: ConfigurationPatch },
    responses: {
      '200': json('Staged', FunctionConfig),
      ...superUserErrors,
      '400': error('Invalid name, invalid log level (details list the allowed levels), unknown key or invalid JSON'),
      '404': error('Function does not exist'),
      '413': error('Body over 64 KB'),
      '415': error('Body is not application/json'),
    },
  },
  {
    method: 'delete',
    path: '/appconfig/{function_name}',
    operationId: 'deleteAppConfig',
    summary: 'Remove the configuration; the function reverts to WARNING',
    bearer: true,
    params: FunctionParams,
    responses: {
      '204': empty('Removed'),
      ...superUserErrors,
      '400': error('Name does not start with svc-func-'),
      '404': error('Function or configuration not found'),
      '409': error('A deployment is in progress'),
    },
  },
  {
    method: 'post',
    path: '/appconfig/{function_name}/deploy',
    operationId: 'deployAppConfig',
    summary: 'Deploy the latest staged version; it applies at once, then bakes for APPCONFIG_DEPLOY_SECONDS',
    bearer: true,
    params: FunctionParams,
    responses: {
      '202': json('Deployment started', FunctionConfig),
      ...superUserErrors,
      '400': error('Name does not start with svc-func-'),
      '404': error('Function does not exist, or no staged version'),
      '409': error('A deployment is already in progress'),
    },
  },
  {
    method: 'get',
    path: '/admin/devices',
    operationId: 'listDevices',
    summary: 'The device inventory (enrolment, last OTA check, last backup, groups), filtered, by UUID',
    bearer: true,
    query: InventoryQuery,
    responses: { '200': json('Devices', DeviceList), ...superUserErrors, '400': error('A filter is not valid') },
  },
  {
    method: 'get',
    path: '/admin/devices/{uuid}',
    operationId: 'getDevice',
    summary: 'One device, with what the inventory knows of it',
    bearer: true,
    params: UuidParams,
    responses: { '200': json('The device', Device), ...superUserErrors, '400': error('Invalid UUID'), '404': error('No such device') },
  },
  {
    method: 'get',
    path: '/admin/devices/{uuid}/health',
    operationId: 'getDeviceHealth',
    summary: "A device's health: its state, its reports newest first (boots with reasons, crashes, heartbeats, updates), its daily aggregates",
    bearer: true,
    params: UuidParams,
    query: DeviceHealthQuery,
    responses: { '200': json('The timeline', DeviceHealthTimeline), ...superUserErrors, '400': error('Invalid UUID or query'), '404': error('No such device') },
  },
  {
    method: 'get',
    path: '/admin/health',
    operationId: 'getFleetHealth',
    summary: 'The fleet health summary: devices reporting, crashed lately, low on heap, reports dropped; health by release',
    bearer: true,
    query: FleetHealthQuery,
    responses: { '200': json('The summary', FleetHealth), ...superUserErrors, '400': error('A query parameter is not valid') },
  },
  {
    method: 'put',
    path: '/admin/devices/{uuid}/groups',
    operationId: 'setDeviceGroups',
    summary: "Replace a device's groups (staged rollouts may target groups)",
    bearer: true,
    params: UuidParams,
    body: { required: true, json: DeviceGroupsBody },
    responses: {
      '200': json('The device', Device),
      ...superUserErrors,
      '400': error('Invalid UUID or groups'),
      '404': error('No such device'),
      '413': error('Body over 64 KB'),
      '415': error('Body is not application/json'),
    },
  },
  {
    method: 'put',
    path: '/admin/devices/{uuid}/label',
    operationId: 'setDeviceLabel',
    summary: "Set a device's label (null or \"\" clears it); its key and groups are kept",
    bearer: true,
    params: UuidParams,
    body: { required: true, json: DeviceLabelBody },
    responses: {
      '200': json('The device', Device),
      ...superUserErrors,
      '400': error('Invalid UUID or label (over 200 characters, a control character, not a string or null)'),
      '404': error('No such device'),
      '413': error('Body over 64 KB'),
      '415': error('Body is not application/json'),
    },
  },
  {
    method: 'get',
    path: '/admin/device-versions',
    operationId: 'countDeviceVersions',
    summary: 'How many devices run each version, per track (from each device\'s last OTA check), versions newest first',
    bearer: true,
    query: DeviceVersionsQuery,
    responses: { '200': json('The counts', DeviceVersions), ...superUserErrors, '400': error('A filter is not valid') },
  },
  {
    method: 'put',
    path: '/admin/devices/{uuid}',
    operationId: 'enrollDevice',
    summary: 'Enroll (201) or re-enroll (200) a device with its P-256 public key',
    bearer: true,
    params: UuidParams,
    body: { required: true, json: EnrollBody },
    responses: {
      '200': json('Re-enrolled', Device),
      '201': json('Enrolled', Device),
      ...superUserErrors,
      '400': error('Invalid UUID, JSON or public key'),
      '413': error('Body over 64 KB'),
      '415': error('Body is not application/json'),
    },
  },
  {
    method: 'delete',
    path: '/admin/devices/{uuid}',
    operationId: 'removeDevice',
    summary: 'Remove a device (its stored backup is kept)',
    bearer: true,
    params: UuidParams,
    responses: { '204': empty('Removed'), ...superUserErrors, '400': error('Invalid UUID'), '404': error('No such device') },
  },
  {
    method: 'get',
    path: '/admin/firmware',
    operationId: 'listTracks',
    summary: 'Every track that has a release, with its counts',
    bearer: true,
    responses: { '200': json('Tracks', TrackList), ...superUserErrors },
  },
  {
    method: 'get',
    path: '/admin/firmware/{class}/{product_hex}/{application}',
    operationId: 'listFirmware',
    summary: 'Every version of a track, RELEASED and REVOKED, oldest first, with rollouts and update outcomes',
    bearer: true,
    params: TrackParams,
    responses: { '200': json('Versions', ReleaseList), ...superUserErrors, '400': error('Invalid track') },
  },
  {
    method: 'put',
    path: '/admin/firmware/{class}/{product_hex}/{application}/{version}',
    operationId: 'releaseFirmware',
    summary: 'Create a RELEASED version',
    bearer: true,
    params: NewReleaseParams,
    body: { required: false, json: ImageMetadata },
    responses: {
      '201': json('Released', Manifest),
      ...superUserErrors,
      '400': error('Invalid track, version, image metadata or rollout; no url and no "no_image": true (image_required)'),
      '409': error('The version exists, or the track requires signed images (signing_requires_image: release with the image)'),
      '413': error('Body over 64 KB'),
      '415': error('Body is not application/json'),
    },
  },
  {
    method: 'put',
    path: '/admin/firmware/{class}/{product_hex}/{application}/{version}/image',
    operationId: 'releaseFirmwareImage',
    summary: 'Create a RELEASED version from its image, which the cloud then hosts (checked first: docs/firmware-images.md)',
    bearer: true,
    params: NewReleaseParams,
    query: ImageReleaseQuery,
    body: { required: true, binaryMaxBytes: productOtaSlotBytes() },
    responses: {
      '201': json('Released; the manifest url points at this cloud; signed_by names the key that signed the image (null: not signed)', HostedRelease),
      ...superUserErrors,
      '400': error(
        'Not an app image, wrong chip, version or project, SHA-256 mismatch, wrong Content-Type, a bad query parameter, or (the track requiring signed images) not signed, a damaged signature block, changed after signing, no block by a trusted key, or a signature that does not verify',
      ),
      '409': error('The version exists, or a newer one is RELEASED'),
      '413': error('The image is larger than the OTA slot'),
    },
  },
  {
    method: 'post',
    path: '/admin/firmware/{class}/{product_hex}/{application}/{version}/revoke',
    operationId: 'revokeFirmware',
    summary: 'Make a version REVOKED (idempotent)',
    bearer: true,
    params: ReleaseParams,
    responses: { '200': json('Revoked', Manifest), ...superUserErrors, '400': error('Invalid track or version'), '404': error('No such version') },
  },
  {
    method: 'get',
    path: '/admin/firmware/{class}/{product_hex}/{application}/{version}/health',
    operationId: 'getReleaseHealth',
    summary: "A release's health: devices, device-hours, unexpected reboots per 1,000 device-hours, crash-free share, update outcomes; the previous release's; its rollout's health gate",
    bearer: true,
    params: ReleaseParams,
    responses: { '200': json('The figures', ReleaseHealth), ...superUserErrors, '400': error('Invalid track or version'), '404': error('No such version') },
  },
  {
    method: 'get',
    path: '/admin/firmware/{class}/{product_hex}/{application}/{version}/rollout',
    operationId: 'getRollout',
    summary: 'The staged rollout of a release, with its update outcomes',
    bearer: true,
    params: ReleaseParams,
    responses: { '200': json('The rollout', Rollout), ...superUserErrors, '400': error('Invalid track or version'), '404': error('No rollout') },
  },
  {
    method: 'get',
    path: '/admin/firmware/{class}/{product_hex}/{application}/{version}/rollout/devices',
    operationId: 'listRolloutDevices',
    summary: "The devices behind a release's update outcomes (pending, succeeded, failed), by UUID",
    bearer: true,
    params: ReleaseParams,
    query: RolloutDevicesQuery,
    responses: { '200': json('The devices', RolloutDeviceList), ...superUserErrors, '400': error('Invalid track, version or query'), '404': error('No such version') },
  },
  {
    method: 'put',
    path: '/admin/firmware/{class}/{product_hex}/{application}/{version}/rollout',
    operationId: 'setRollout',
    summary: 'Start a staged rollout (201), or change the settings given (200); the others are kept',
    bearer: true,
    params: ReleaseParams,
    body: { required: true, json: RolloutBody },
    responses: {
      '200': json('Changed', Rollout),
      '201': json('Started', Rollout),
      ...superUserErrors,
      '400': error('Invalid track, version or settings'),
      '404': error('No such version'),
      '413': error('Body over 64 KB'),
      '415': error('Body is not application/json'),
    },
  },
  {
    method: 'delete',
    path: '/admin/firmware/{class}/{product_hex}/{application}/{version}/rollout',
    operationId: 'endRollout',
    summary: 'End the rollout: the release is answered to every device as the spec says',
    bearer: true,
    params: ReleaseParams,
    responses: { '204': empty('Ended'), ...superUserErrors, '400': error('Invalid track or version'), '404': error('No rollout') },
  },
  {
    method: 'post',
    path: '/admin/firmware/{class}/{product_hex}/{application}/{version}/rollout/pause',
    operationId: 'pauseRollout',
    summary: 'Pause the rollout: nobody new is offered the release (idempotent)',
    bearer: true,
    params: ReleaseParams,
    responses: { '200': json('Paused', Rollout), ...superUserErrors, '400': error('Invalid track or version'), '404': error('No rollout') },
  },
  {
    method: 'post',
    path: '/admin/firmware/{class}/{product_hex}/{application}/{version}/rollout/resume',
    operationId: 'resumeRollout',
    summary: 'Resume the rollout; its schedule counts from now (idempotent)',
    bearer: true,
    params: ReleaseParams,
    responses: { '200': json('Resumed', Rollout), ...superUserErrors, '400': error('Invalid track or version'), '404': error('No rollout') },
  },
  {
    method: 'get',
    path: '/admin/tracks/{class}/{product_hex}/{application}/signing',
    operationId: 'getTrackSigning',
    summary: "A track's signing setting: whether its images must be signed, and the key digests it trusts (never set: off, no keys)",
    bearer: true,
    params: TrackParams,
    responses: { '200': json('The setting', TrackSigning), ...superUserErrors, '400': error('Invalid track') },
  },
  {
    method: 'put',
    path: '/admin/tracks/{class}/{product_hex}/{application}/signing',
    operationId: 'setTrackSigning',
    summary: "Replace a track's signing setting: with required, an image upload is refused unless signed by one of keys (docs/secure-boot.md)",
    bearer: true,
    params: TrackParams,
    body: { required: true, json: TrackSigningBody },
    responses: {
      '200': json('Set', TrackSigning),
      ...superUserErrors,
      '400': error('Invalid track, or setting (a digest not 64 hex digits, listed twice, required with no key, an unknown key)'),
      '413': error('Body over 64 KB'),
      '415': error('Body is not application/json'),
    },
  },
  {
    method: 'post',
    path: '/console/session',
    operationId: 'consoleLogin',
    summary:
      "Log the console in with a super-user JWT: a session kept by the cloud (until the token's exp, at most 8 h), its opaque id and CSRF token in HttpOnly SameSite=Strict cookies (__Host- over https); the answer gives the page the CSRF token",
    body: { required: true, json: ConsoleLogin },
    responses: {
      '201': json('Logged in', ConsoleSession),
      '400': error('No token in the body'),
      '401': error('Missing or invalid token'),
      '403': error('Not a super user, or another origin'),
      '413': error('Body over 64 KB'),
      '415': error('Body is not application/json'),
    },
  },
  {
    method: 'get',
    path: '/console/session',
    operationId: 'consoleSession',
    summary: "The console's session (after a reload): who, until when, the CSRF token",
    responses: { '200': json('The session', ConsoleSession), '401': error('No session (missing_token), or it ended or expired (session_expired)'), '403': error('Not a super user') },
  },
  {
    method: 'delete',
    path: '/console/session',
    operationId: 'consoleLogout',
    summary: 'Log the console out: the session is deleted from the store (refused by every instance from now on) and both cookies cleared',
    responses: { '204': empty('Logged out'), '403': error('csrf_check_failed') },
  },
  { method: 'get', path: '/console', operationId: 'consolePage', summary: 'The operator console (docs/operator-console.md)', responses: { '200': { description: 'The page', media: 'text/html' }, '304': empty('If-None-Match holds the ETag') } },
  { method: 'get', path: '/console/app.js', operationId: 'consoleScript', summary: "The console's script", responses: { '200': { description: 'The script', media: 'text/javascript' }, '304': empty('If-None-Match holds the ETag') } },
  { method: 'get', path: '/console/app.css', operationId: 'consoleStyles', summary: "The console's stylesheet", responses: { '200': { description: 'The stylesheet', media: 'text/css' }, '304': empty('If-None-Match holds the ETag') } },
  {
    method: 'get',
    path: '/admin/audit',
    operationId: 'listAudit',
    summary: 'The audit log: every change made by a super user or by the cloud itself, newest first',
    bearer: true,
    query: AuditQuery,
    responses: { '200': json('Entries', AuditList), ...superUserErrors, '400': error('A query parameter is not valid') },
  },
];
