// GET /images/{class}/{product_hex}/{application}/{version}.bin: the images the cloud hosts
// (docs/firmware-images.md), at the manifest's url, with their SHA-256 as a strong ETag, and one byte
// range per request (206, If-Range; 416 outside the image) so that a board whose download was cut
// resumes it. No authorizer, as the update check. Bytes are kept in memory, bounded in bytes: an
// image never changes once released (a version is created once), so a thousand boards fetching one
// share one Buffer and one store read; whether it is still RELEASED comes from the OTA service's
// track cache, so a revocation stops its downloads within OTA_CACHE_TTL_MS.
import { Router, type Request } from 'express';
import { ApiError } from '../errors.ts';
import { route } from '../http.ts';
import { decideRange, noneMatch } from '../http-range.ts';
import type { FunctionLogger } from '../logging.ts';
import type { CloudStore, HostedImage, ReleaseTrack } from '../store/types.ts';
import { ByteBudgetLru } from './answer-cache.ts';
import type { OtaService } from './service.ts';
import { parseTrack, parseVersion } from './validate.ts';

/** Default byte budget of hosted images kept in memory (IMAGE_CACHE_BYTES). */
export const DEFAULT_IMAGE_CACHE_BYTES = 32 * 1024 * 1024;
export const IMAGE_ROUTE = '/images/:class/:product_hex/:application/:version.bin';

export class HostedImages {
  private readonly cache: ByteBudgetLru<HostedImage>;
  /** One store read per image however many ask at once. */
  private readonly loading = new Map<string, Promise<HostedImage | null>>();

  constructor(
    private readonly store: CloudStore,
    private readonly ota: OtaService,
    budgetBytes: number,
  ) {
    this.cache = new ByteBudgetLru(budgetBytes);
  }

  /** The image of a RELEASED version; image_not_found otherwise (none hosted, unknown, or REVOKED). */
  async get(t: ReleaseTrack, version: string): Promise<HostedImage> {
    const key = `${t.class}/${t.productHex}/${t.application}/${version}`;
    const { releases } = await this.ota.trackState(t);
    const known = releases.find((r) => r.version === version);
    if (known && (known.status !== 'RELEASED' || !known.hosted)) throw notFound(t, version, known.status);
    let image = this.cache.get(key);
    if (!image) {
      let load = this.loading.get(key);
      if (!load) {
        load = this.store.getImage(t, version).finally(() => this.loading.delete(key));
        this.loading.set(key, load);
      }
      const loaded = await load;
      if (!loaded) throw notFound(t, version);
      image = loaded;
      this.cache.set(key, image, image.size);
    }
    // A release this instance has not seen yet (created on another one): the store's status decides.
    if (!known && image.status !== 'RELEASED') throw notFound(t, version, image.status);
    return image;
  }

  /** Forget an image (tests; an image is otherwise immutable). */
  clear(): void {
    this.cache.clear();
  }
}

function notFound(t: ReleaseTrack, version: string, status?: string): ApiError {
  return new ApiError('image_not_found', { class: t.class, product_hex: t.productHex, application: t.application, version, ...(status ? { status } : {}) });
}

function one(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

export function imageRoutes(images: HostedImages, log: FunctionLogger): Router {
  const router = Router();
  router.get(
    IMAGE_ROUTE,
    route(async (req, res) => {
      const t = parseTrack(req.params.class as string, req.params.product_hex as string, req.params.application as string);
      const version = parseVersion(req.params.version as string);
      const image = await images.get(t, version);
      const etag = `"${image.sha256}"`;
      const lastModified = new Date(image.releasedAt).toUTCString();
      res.setHeader('etag', etag);
      res.setHeader('last-modified', lastModified);
      res.setHeader('accept-ranges', 'bytes');
      // Revalidated every time (a 304 is cheap): a revoked image must not live on in a cache.
      res.setHeader('cache-control', 'no-cache');
      res.setHeader('x-content-type-options', 'nosniff');
      if (noneMatch(one(req, 'if-none-match'), etag)) {
        res.status(304).end();
        return;
      }
      const range = decideRange(one(req, 'range'), one(req, 'if-range'), image.size, etag, lastModified);
      if (range.kind === 'unsatisfiable') {
        res.setHeader('content-range', `bytes */${image.size}`);
        throw new ApiError('range_not_satisfiable', { size: image.size, range: one(req, 'range')!.slice(0, 100) }, `The range is outside the image (${image.size} bytes)`);
      }
      if (range.kind === 'partial') {
        log.debug('image range served', { version, first: range.first, last: range.last });
        res.writeHead(206, { 'content-type': 'application/octet-stream', 'content-length': range.last - range.first + 1, 'content-range': `bytes ${range.first}-${range.last}/${image.size}` });
        res.end(image.bytes.subarray(range.first, range.last + 1));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': image.size });
      res.end(image.bytes);
    }),
  );
  return router;
}
