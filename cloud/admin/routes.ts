// The admin API (DESIGN.md section 4), for super users: enroll and remove devices, release and revoke
// firmware, list both.
import { Router, type Request, type RequestHandler } from 'express';
import { checkDevicePublicKey, rememberEnrolledKey } from '../auth/device-signature.ts';
import { ApiError } from '../errors.ts';
import { route, sendJson } from '../http.ts';
import { requireJsonBody } from '../json-body.ts';
import type { FunctionLogger } from '../logging.ts';
import { toManifest } from '../ota/manifest.ts';
import type { OtaService } from '../ota/service.ts';
import { parseTrack, parseVersion } from '../ota/validate.ts';
import { EnrollBody, ImageMetadata as ImageMetadataShape, UuidParams } from '../schema/api.ts';
import { checked, checker } from '../schema/request.ts';
import type { CloudStore, DeviceRecord, ImageMetadata } from '../store/types.ts';

export interface AdminRoutesDeps {
  store: CloudStore;
  ota: OtaService;
  superUser: RequestHandler;
  log: FunctionLogger;
  now: () => number;
}

const checkUuid = checker(UuidParams);
const checkImage = checker(ImageMetadataShape);
const checkEnroll = checker(EnrollBody);

function deviceView(d: DeviceRecord) {
  return { uuid: d.uuid, public_key: d.publicKeyPem, enrolled_at: d.enrolledAt, updated_at: d.updatedAt };
}

function uuidParam(req: Request): string {
  return checked(checkUuid, { uuid: req.params.uuid }, 'invalid_uuid').uuid;
}

function trackParams(req: Request) {
  return parseTrack(req.params.class as string, req.params.product_hex as string, req.params.application as string);
}

/** The image metadata of a release (ImageMetadata): all optional. An empty or absent body is allowed. */
export function parseImageMetadata(req: Request): ImageMetadata {
  const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
  if (!hasBody && req.headers['transfer-encoding'] === undefined) return {};
  const image = checked(checkImage, requireJsonBody(req), 'invalid_release_metadata');
  return image.sha256 === undefined ? image : { ...image, sha256: image.sha256.toLowerCase() };
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
      // Never echoed nor logged: what was sent may be a private key.
      const body = requireJsonBody(req);
      if (!checkEnroll(body)) throw new ApiError('invalid_public_key', { reason: 'not_spki_pem', field: 'public_key', expected: 'a PEM SPKI string of at most 4096 characters' });
      const key = checkDevicePublicKey(body.public_key);
      if (!('key' in key)) {
        const { message, ...details } = key;
        throw new ApiError('invalid_public_key', details, message);
      }
      const { device, created } = await store.putDevice(uuid, key.pem, iso());
      // The key is parsed already: the device's first signed request need not parse it again.
      rememberEnrolledKey(uuid, device.publicKeyPem, key.key);
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
