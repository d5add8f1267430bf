// POST /devices/{uuid}/health (docs/device-health.md, In the cloud): one report of a device, signed as a
// backup upload is (the same verifier and nonce cache, cloud/auth/device-signature.ts). The checks that
// cost nothing come first and refuse with nothing stored: the headers (400, 403), the media type (415),
// the declared size (413 before a byte of the body is read), then the body, read up to 2,048 bytes
// (413 past it), parsed and checked against its report's shape (400 invalid_health_report naming the
// field); then the signature (401: unknown device, stale timestamp, bad signature, replayed nonce);
// then the report is stored: 201 {seq}, or 200 {seq} when that seq was stored before. Devices' own
// target is answered before Express (cloud/device-fast-path.ts), with the same function.
import { Router } from 'express';
import type { IncomingMessage } from 'node:http';
import { parseSignedHeaders, type DeviceAuthenticator } from '../auth/device-signature.ts';
import type { DeviceHandler } from '../device-fast-path.ts';
import { ApiError } from '../errors.ts';
import { BodyTooLargeError, route, sendJson } from '../http.ts';
import type { FunctionLogger } from '../logging.ts';
import { UuidParams } from '../schema/api.ts';
import { HealthReportKind, REPORT_SHAPES } from '../schema/health.ts';
import { checked, checker } from '../schema/request.ts';
import type { HealthReport } from '../store/types.ts';
import { readUploadBody } from '../transport.ts';
import { HEALTH_REPORT_MAX_BYTES, HEARTBEAT_MAX_BYTES } from '../health-definitions.ts';
import type { HealthService } from './service.ts';

export interface DeviceHealthRoutesDeps {
  health: HealthService;
  auth: DeviceAuthenticator;
  log: FunctionLogger;
  /** A body that sends nothing for this long is refused with 408 (docs/cloud-limits.md). */
  bodyIdleTimeoutMs: number;
}

const checkUuid = checker(UuidParams);
const checkKind = checker(HealthReportKind);
const checkReport = Object.fromEntries(Object.entries(REPORT_SHAPES).map(([kind, shape]) => [kind, checker(shape)])) as { [K in keyof typeof REPORT_SHAPES]: ReturnType<typeof checker<(typeof REPORT_SHAPES)[K]>> };

const tooLarge = (limit: number, extra: Record<string, unknown> = {}) =>
  new ApiError('health_report_too_large', { limit_bytes: limit, ...extra }, `A ${extra.kind ?? 'health report'} is at most ${limit} bytes`);

/** A declared body over the limit: refused before it is read (also before `100 Continue`, cloud/app.ts). */
export function healthReportTooLarge(declaredLength: number): ApiError | undefined {
  return declaredLength > HEALTH_REPORT_MAX_BYTES ? tooLarge(HEALTH_REPORT_MAX_BYTES, { content_length: declaredLength }) : undefined;
}

/** The body as one report: JSON, at most its kind's size, of its kind's shape. */
export async function readHealthReport(req: IncomingMessage, idleTimeoutMs: number): Promise<HealthReport> {
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== 'application/json') throw new ApiError('unsupported_media_type', { content_type: req.headers['content-type']?.slice(0, 128) ?? null });
  const declared = healthReportTooLarge(Number(req.headers['content-length']));
  if (declared) throw declared;
  let body: Buffer;
  try {
    body = (await readUploadBody(req, HEALTH_REPORT_MAX_BYTES, { idleTimeoutMs })).body!;
  } catch (err) {
    if (err instanceof BodyTooLargeError) throw tooLarge(HEALTH_REPORT_MAX_BYTES);
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new ApiError('invalid_health_report', { expected: 'one JSON object' }, 'The body is not JSON: one report, a JSON object, is expected');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError('invalid_health_report', { expected: 'one JSON object' }, 'The body must be one report, a JSON object');
  }
  const { kind } = checked(checkKind, value, 'invalid_health_report');
  const report = checked(checkReport[kind], value, 'invalid_health_report') as HealthReport;
  if (kind === 'heartbeat' && body.length > HEARTBEAT_MAX_BYTES) throw tooLarge(HEARTBEAT_MAX_BYTES, { kind, received_bytes: body.length });
  return report;
}

/** POST /devices/{uuid}/health on node's request and response (the Express route and the fast path both call it). */
export function healthReporter({ health, auth, log, bodyIdleTimeoutMs }: DeviceHealthRoutesDeps): DeviceHandler {
  return async (req, res, rawUuid) => {
    const { uuid } = checked(checkUuid, { uuid: rawUuid }, 'invalid_uuid');
    const signed = parseSignedHeaders(req.headers, uuid);
    const report = await readHealthReport(req, bodyIdleTimeoutMs);
    await auth.authenticate(signed);
    const { stored } = await health.ingest(uuid, report);
    if (stored) log.info('health report stored', { uuid, seq: report.seq, kind: report.kind });
    sendJson(res, stored ? 201 : 200, { seq: report.seq });
  };
}

export function deviceHealthRoutes(deps: DeviceHealthRoutesDeps): Router {
  const router = Router();
  const report = healthReporter(deps);
  router.post(
    '/devices/:uuid/health',
    route(async (req, res) => report(req, res, req.params.uuid as string)),
  );
  return router;
}
