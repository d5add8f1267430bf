// The admin API's firmware half (DESIGN.md section 4; issue 21): tracks, releases from metadata or
// from an uploaded image the cloud hosts (docs/firmware-images.md), revocation, and staged rollouts
// (docs/staged-rollouts.md). Super users only (the router is mounted behind the authorizer).
import { Router, type Request } from 'express';
import { chipByName } from '../../firmware/image/chips.ts';
import type { Admission } from '../admission.ts';
import type { CloudConfig } from '../config.ts';
import { ApiError } from '../errors.ts';
import { BodyTooLargeError, route, sendJson } from '../http.ts';
import { requireJsonBody } from '../json-body.ts';
import type { FunctionLogger } from '../logging.ts';
import { toManifest } from '../ota/manifest.ts';
import { MAX_IMAGE_BYTES } from '../ota/release-checks.ts';
import { signedByView, type ReleaseService, type RolloutChange } from '../ota/releases.ts';
import { parseVersion } from '../ota/validate.ts';
import { ImageMetadata as ImageMetadataShape, ImageReleaseQuery, RolloutBody, RolloutDevicesQuery } from '../schema/api.ts';
import { checked, checker } from '../schema/request.ts';
import type { CloudStore, ImageMetadata } from '../store/types.ts';
import { readUploadBody } from '../transport.ts';
import { trackParams, who } from './audit.ts';

export interface FirmwareRoutesDeps {
  releases: ReleaseService;
  store: CloudStore;
  config: Pick<CloudConfig, 'publicUrl'>;
  log: FunctionLogger;
  bodyIdleTimeoutMs: number;
  uploads: Admission | undefined;
}

const checkImage = checker(ImageMetadataShape);
const checkImageQuery = checker(ImageReleaseQuery);
const checkRollout = checker(RolloutBody);
const TRACK = '/admin/firmware/:class/:product_hex/:application';
const checkRolloutDevices = checker(RolloutDevicesQuery);
const RELEASE = `${TRACK}/:version`;

/** Rollout settings from a request body (snake_case) to the service's shape. */
export function rolloutChange(body: unknown): RolloutChange {
  const b = checked(checkRollout, body, 'invalid_rollout');
  return {
    percent: b.percent,
    groups: b.groups,
    stepPercent: b.step_percent,
    stepEverySeconds: b.step_every_seconds,
    errorThresholdPercent: b.error_threshold_percent,
    minReports: b.min_reports,
    healthMargin: b.health_margin,
    healthMinDeviceHours: b.health_min_device_hours,
  };
}

/**
 * The image metadata of a release, and its rollout. The url is required: a release devices are offered
 * and cannot download is refused (image_required), unless it says `"no_image": true`, a version devices
 * already run and never download (a factory image), then with no url, size or sha256 (docs/firmware-images.md).
 */
export function parseImageMetadata(req: Request): { image: ImageMetadata; rollout: RolloutChange | undefined } {
  const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
  const body = !hasBody && req.headers['transfer-encoding'] === undefined ? {} : checked(checkImage, requireJsonBody(req), 'invalid_release_metadata');
  const { rollout, no_image: noImage, ...image } = body;
  if (noImage) {
    const given = (['url', 'size', 'sha256'] as const).filter((k) => image[k] !== undefined);
    if (given.length > 0) throw new ApiError('invalid_release_metadata', { field: 'no_image', also_given: given }, `no_image: a release without an image has no ${given.join(', ')}; leave out no_image to release the image at its url`);
  } else if (image.url === undefined) {
    throw new ApiError('image_required', { missing: 'url', given: Object.keys(image) });
  }
  return { image: image.sha256 === undefined ? image : { ...image, sha256: image.sha256.toLowerCase() }, rollout: rollout === undefined ? undefined : rolloutChange(rollout) };
}

/** The rollout an image upload asks for in its query (rollout_*), through the same checks as the JSON body. */
function rolloutFromQuery(q: Record<string, string | undefined>): RolloutChange | undefined {
  if (!Object.keys(q).some((k) => k.startsWith('rollout_'))) return undefined;
  const n = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const body: Record<string, unknown> = {
    percent: n(q.rollout_percent),
    groups: q.rollout_groups === undefined ? undefined : q.rollout_groups.split(',').map((g) => g.trim()).filter((g) => g !== ''),
    step_percent: n(q.rollout_step_percent),
    step_every_seconds: n(q.rollout_step_every_seconds),
    error_threshold_percent: n(q.rollout_error_threshold_percent),
    min_reports: n(q.rollout_min_reports),
  };
  return rolloutChange(Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)));
}

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** Where devices reach this cloud: PUBLIC_URL, else the scheme and Host of the upload itself. */
function baseUrl(req: Request, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const host = req.headers.host ?? '';
  if (!HOST.test(host)) throw new ApiError('bad_request', { header: 'host' }, 'The Host header cannot make an image URL; set PUBLIC_URL');
  return `${req.protocol}://${host}`;
}

export function firmwareRoutes({ releases, store, config, log, bodyIdleTimeoutMs, uploads }: FirmwareRoutesDeps): Router {
  const router = Router();
  const logRelease = (what: string, t: ReturnType<typeof trackParams>, version: string, by: string | undefined, extra: Record<string, unknown> = {}) =>
    log.info(what, { class: t.class, product_hex: t.productHex, application: t.application, version, by, ...extra });

  router.get(
    '/admin/firmware',
    route(async (_req, res) => {
      const tracks = await store.listTracks();
      sendJson(res, 200, { tracks: tracks.map((t) => ({ class: t.class, product_hex: t.productHex, application: t.application, released: t.released, revoked: t.revoked, latest: t.latest })) });
    }),
  );

  router.get(
    TRACK,
    route(async (req, res) => {
      sendJson(res, 200, { versions: await releases.list(trackParams(req)) });
    }),
  );

  router.put(
    RELEASE,
    route(async (req, res) => {
      const t = trackParams(req);
      const version = parseVersion(req.params.version as string, 'version', { release: true });
      const { image, rollout } = parseImageMetadata(req);
      const created = await releases.createFromMetadata(t, version, image, rollout);
      logRelease('firmware released', t, version, who(res), rollout ? { rollout: true } : {});
      sendJson(res, 201, toManifest(created));
    }),
  );

  router.put(
    `${RELEASE}/image`,
    route(async (req, res) => {
      const t = trackParams(req);
      const version = parseVersion(req.params.version as string, 'version', { release: true });
      const q = checked(checkImageQuery, { ...req.query }, 'invalid_query');
      const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (contentType !== 'application/octet-stream') {
        throw new ApiError('invalid_content_type', { content_type: req.headers['content-type']?.slice(0, 128) ?? null }, 'An image upload must be Content-Type: application/octet-stream');
      }
      // Size before work: a declared length over the OTA slot is refused before a byte is read.
      const declared = Number(req.headers['content-length']);
      if (declared > MAX_IMAGE_BYTES) throw new ApiError('image_too_large', { limit_bytes: MAX_IMAGE_BYTES, content_length: declared }, `The image has ${declared} bytes; the OTA slot holds ${MAX_IMAGE_BYTES}`);
      const rollout = rolloutFromQuery(q);
      const release = await uploads?.acquire();
      try {
        let image: Buffer;
        try {
          image = (await readUploadBody(req, MAX_IMAGE_BYTES, { keep: true, idleTimeoutMs: bodyIdleTimeoutMs })).body!;
        } catch (err) {
          if (err instanceof BodyTooLargeError) throw new ApiError('image_too_large', { limit_bytes: MAX_IMAGE_BYTES }, `The image is larger than the OTA slot (${MAX_IMAGE_BYTES} bytes)`);
          throw err;
        }
        const { created, signing } = await releases.createHosted(t, version, {
          image,
          chip: chipByName(q.chip ?? 'esp32s3'),
          project: q.project,
          declaredSha256: q.sha256?.toLowerCase(),
          baseUrl: baseUrl(req, config.publicUrl),
          rollout,
        });
        const signer = created.signedBy ? { signed_block: created.signedBy.block, signed_by_key: created.signedBy.keyDigest } : {};
        logRelease('firmware released with a hosted image', t, version, who(res), { size: created.size, sha256: created.sha256, ...signer, ...(rollout ? { rollout: true } : {}) });
        sendJson(res, 201, { ...toManifest(created), signed_by: signedByView(created, signing) });
      } finally {
        release?.();
      }
    }),
  );

  router.post(
    `${RELEASE}/revoke`,
    route(async (req, res) => {
      const t = trackParams(req);
      const version = parseVersion(req.params.version as string);
      const revoked = await releases.revoke(t, version);
      log.warning('firmware revoked', { class: t.class, product_hex: t.productHex, application: t.application, version, by: who(res) });
      sendJson(res, 200, toManifest(revoked));
    }),
  );

  router.get(
    `${RELEASE}/rollout`,
    route(async (req, res) => {
      sendJson(res, 200, await releases.rollout(trackParams(req), parseVersion(req.params.version as string)));
    }),
  );

  router.get(
    `${RELEASE}/rollout/devices`,
    route(async (req, res) => {
      const q = checked(checkRolloutDevices, { ...req.query }, 'invalid_query');
      const limit = Math.min(Math.max(Number(q.limit ?? 1000), 1), 10_000);
      const o = { limit, ...(q.outcome !== undefined ? { outcome: q.outcome } : {}), ...(q.after !== undefined ? { after: q.after } : {}) };
      sendJson(res, 200, await releases.outcomeDevices(trackParams(req), parseVersion(req.params.version as string), o));
    }),
  );

  router.put(
    `${RELEASE}/rollout`,
    route(async (req, res) => {
      const t = trackParams(req);
      const version = parseVersion(req.params.version as string);
      const { view, created } = await releases.setRollout(t, version, rolloutChange(requireJsonBody(req)));
      logRelease(created ? 'rollout started' : 'rollout changed', t, version, who(res), { percent: view.percent, groups: view.groups });
      sendJson(res, created ? 201 : 200, view);
    }),
  );

  router.delete(
    `${RELEASE}/rollout`,
    route(async (req, res) => {
      const t = trackParams(req);
      const version = parseVersion(req.params.version as string);
      await releases.deleteRollout(t, version);
      logRelease('rollout ended: released to every device', t, version, who(res));
      res.status(204).end();
    }),
  );

  for (const action of ['pause', 'resume'] as const) {
    router.post(
      `${RELEASE}/rollout/${action}`,
      route(async (req, res) => {
        const t = trackParams(req);
        const version = parseVersion(req.params.version as string);
        const view = action === 'pause' ? await releases.pause(t, version, `paused by ${who(res) ?? 'a super user'}`) : await releases.resume(t, version);
        logRelease(`rollout ${action}d`, t, version, who(res));
        sendJson(res, 200, view);
      }),
    );
  }

  return router;
}
