// The admin API (DESIGN.md section 4), for super users: enroll and remove devices, release and revoke
// firmware, list both.
import { Router, type Request, type RequestHandler } from 'express';
import { checkDevicePublicKey, DEVICE_UUID } from '../auth/device-signature.ts';
import { ApiError } from '../errors.ts';
import { route, sendJson } from '../http.ts';
import { requireJsonBody } from '../json-body.ts';
import type { FunctionLogger } from '../logging.ts';
import { toManifest } from '../ota/manifest.ts';
import type { OtaService } from '../ota/service.ts';
import { parseTrack, parseVersion } from '../ota/validate.ts';
import type { CloudStore, DeviceRecord, ImageMetadata } from '../store/types.ts';

export interface AdminRoutesDeps {
  store: CloudStore;
  ota: OtaService;
  superUser: RequestHandler;
  log: FunctionLogger;
  now: () => number;
}

const IMAGE_KEYS = ['url', 'size', 'sha256'] as const;

function deviceView(d: DeviceRecord) {
  return { uuid: d.uuid, public_key: d.publicKeyPem, enrolled_at: d.enrolledAt, updated_at: d.updatedAt };
}

function uuidParam(req: Request): string {
  const uuid = req.params.uuid as string;
  if (!DEVICE_UUID.test(uuid)) throw new ApiError('invalid_uuid');
  return uuid;
}

function trackParams(req: Request) {
  return parseTrack(req.params.class as string, req.params.product_hex as string, req.params.application as string);
}

/** The image metadata of a release: all optional, each checked. An empty or absent body is allowed. */
export function parseImageMetadata(req: Request): ImageMetadata {
  const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
  if (!hasBody && req.headers['transfer-encoding'] === undefined) return {};
  const body = requireJsonBody(req);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_release_metadata', { expected: '{"url"?, "size"?, "sha256"?}' });
  }
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !(IMAGE_KEYS as readonly string[]).includes(k));
  if (unknown.length) throw new ApiError('invalid_release_metadata', { unknown_keys: unknown.slice(0, 16).map((k) => k.slice(0, 64)), allowed: [...IMAGE_KEYS] });
  const out: ImageMetadata = {};
  if (b.url !== undefined) {
    // No control characters or spaces: PostgreSQL refuses NUL in text (a 500), and a manifest URL a
    // device fetches must be what was parsed.
    let ok = typeof b.url === 'string' && b.url.length <= 2048 && !/[\u0000-\u0020\u007f]/.test(b.url);
    if (ok) {
      try {
        ok = ['http:', 'https:'].includes(new URL(b.url as string).protocol);
      } catch {
        ok = false;
      }
    }
    if (!ok) throw new ApiError('invalid_release_metadata', { field: 'url' }, 'url must be an http or https URL');
    out.url = b.url as string;
  }
  if (b.size !== undefined) {
    if (!Number.isSafeInteger(b.size) || (b.size as number) <= 0) {
      throw new ApiError('invalid_release_metadata', { field: 'size' }, 'size must be a positive whole number of bytes');
    }
    out.size = b.size as number;
  }
  if (b.sha256 !== undefined) {
    if (typeof b.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(b.sha256)) {
      throw new ApiError('invalid_release_metadata', { field: 'sha256' }, 'sha256 must be 64 hexadecimal digits');
    }
    out.sha256 = b.sha256.toLowerCase();
  }
  return out;
}

export function adminRoutes({ store, ota, superUser, log, now }: AdminRoutesDeps): Router {
  const router = Router();
  router.use('/admin', superUser);
  const iso = () => new Date(now()).toISOString();

  router.get(
    '/admin/devices',
    route(async (_req, res) => {
      sendJson(res, 200, { devices: (await store.listDevices()).map(deviceView) });
    }),
  );

  router.get(
    '/admin/devices/:uuid',
    route(async (req, res) => {
      const device = await store.getDevice(uuidParam(req));
      if (!device) throw new ApiError('device_not_found');
      const backup = await store.getBackupMeta(device.uuid);
      sendJson(res, 200, {
        ...deviceView(device),
        backup: backup ? { size: backup.size, etag: backup.etag, last_backup_date: backup.lastBackupDate } : null,
      });
    }),
  );

  router.put(
    '/admin/devices/:uuid',
    route(async (req, res) => {
      const uuid = uuidParam(req);
      const body = requireJsonBody(req) as { public_key?: unknown } | null;
      const given = typeof body === 'object' && body !== null ? body.public_key : undefined;
      if (typeof given !== 'string' || given.length > 4096) throw new ApiError('invalid_public_key', { reason: 'not_spki_pem' });
      // Never echoed nor logged: what was sent may be a private key.
      const checked = checkDevicePublicKey(given);
      if (!('key' in checked)) {
        const { message, ...details } = checked;
        throw new ApiError('invalid_public_key', details, message);
      }
      const { device, created } = await store.putDevice(uuid, checked.pem, iso());
      log.info(created ? 'device enrolled' : 'device re-enrolled', { uuid, by: res.locals.superUser?.subject });
      sendJson(res, created ? 201 : 200, deviceView(device));
    }),
  );

  router.delete(
    '/admin/devices/:uuid',
    route(async (req, res) => {
      const uuid = uuidParam(req);
      if (!(await store.deleteDevice(uuid))) throw new ApiError('device_not_found');
      log.info('device removed', { uuid, by: res.locals.superUser?.subject });
      res.status(204).end();
    }),
  );

  router.get(
    '/admin/firmware/:class/:product_hex/:application',
    route(async (req, res) => {
      const releases = await store.listReleases(trackParams(req));
      sendJson(res, 200, { versions: releases.map(toManifest) });
    }),
  );

  router.put(
    '/admin/firmware/:class/:product_hex/:application/:version',
    route(async (req, res) => {
      const track = trackParams(req);
      const version = parseVersion(req.params.version as string, 'version', { release: true });
      const image = parseImageMetadata(req);
      const created = await store.createRelease({ ...track, ...image, version, status: 'RELEASED', releasedAt: iso() });
      if (!created) throw new ApiError('release_exists', { version });
      ota.invalidate(track);
      log.info('firmware released', { class: track.class, product_hex: track.productHex, application: track.application, version, by: res.locals.superUser?.subject });
      sendJson(res, 201, toManifest(created));
    }),
  );

  router.post(
    '/admin/firmware/:class/:product_hex/:application/:version/revoke',
    route(async (req, res) => {
      const track = trackParams(req);
      const version = parseVersion(req.params.version as string);
      const revoked = await store.revokeRelease(track, version, iso());
      if (!revoked) throw new ApiError('release_not_found', { version });
      ota.invalidate(track);
      log.warning('firmware revoked', { class: track.class, product_hex: track.productHex, application: track.application, version, by: res.locals.superUser?.subject });
      sendJson(res, 200, toManifest(revoked));
    }),
  );

  return router;
}
