// Encrypted device backups (spec 2.2, 4.1, 5.1, 7): POST, GET and DELETE /devices/{uuid}/backup, all
// authenticated by the device signature headers. The cloud never sees plaintext: it checks the FFCE
// framing, stores the blob with its plaintext ETag as metadata, and records last_backup_date.
import { Router, type Request, type Response } from 'express';
import { DeviceAuthenticator, parseSignedHeaders } from '../auth/device-signature.ts';
import type { Admission } from '../admission.ts';
import { ApiError } from '../errors.ts';
import { BodyTooLargeError, route, sendJson } from '../http.ts';
import type { FunctionLogger } from '../logging.ts';
import { UuidParams } from '../schema/api.ts';
import { checked, checker } from '../schema/request.ts';
import type { CloudStore } from '../store/types.ts';
import { isFfceBlob, MAX_BACKUP_BYTES, FFCE_MAGIC, FFCE_MIN_BYTES } from './ffce.ts';
import { readUploadBody, type UploadBody } from '../transport.ts';
import { formatEtag, parseEtag, parseIfNoneMatch } from './etag.ts';

export interface BackupRoutesDeps {
  store: CloudStore;
  auth: DeviceAuthenticator;
  log: FunctionLogger;
  now: () => number;
  /** An upload that sends nothing for this long is refused with 408 (docs/cloud-limits.md). */
  bodyIdleTimeoutMs: number;
  /** Bounds the uploads at work (each may hold a body): 503 store_saturated past it (docs/fleet-scale.md). */
  uploads?: Admission;
}

const checkUuid = checker(UuidParams);

function pathUuid(req: Request): string {
  return checked(checkUuid, { uuid: req.params.uuid }, 'invalid_uuid').uuid;
}

export function backupRoutes({ store, auth, log, now, bodyIdleTimeoutMs, uploads }: BackupRoutesDeps): Router {
  const router = Router();

  router.post(
    '/devices/:uuid/backup',
    route(async (req, res) => {
      const uuid = pathUuid(req);
      const signed = parseSignedHeaders(req.headers, uuid);
      const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (contentType !== 'application/octet-stream') {
        throw new ApiError('invalid_content_type', { content_type: req.headers['content-type']?.slice(0, 128) ?? null });
      }
      const etagHeader = req.headers.etag;
      const etag = etagHeader === undefined ? null : parseEtag(etagHeader, 'etag');
      const ifNoneMatch = req.headers['if-none-match'] === undefined ? null : parseIfNoneMatch(req.headers['if-none-match'], 'if-none-match');
      // Size limit before any work: a declared length over the limit is refused before authentication.
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) > MAX_BACKUP_BYTES) {
        throw new ApiError('backup_too_large', { limit_bytes: MAX_BACKUP_BYTES, content_length: Number(declared) });
      }
      // A slot of the upload gate is held from authentication to the store write: the bodies held in
      // memory at once are bounded, and past the gate's queue the device is told to come back (503).
      // A push that will be a 304 holds no body (it is only read away) and takes no slot: the stored
      // ETag is peeked before authentication only to choose the path; the answer still waits for it
      // (docs/fleet-scale.md).
      let release: (() => void) | undefined;
      const slot = async () => {
        if (uploads && !release) release = await uploads.acquire();
      };
      const unchanged = etag !== null && ifNoneMatch !== null && etagMatches((await store.getBackupMeta(uuid))?.etag, ifNoneMatch);
      if (!unchanged) await slot();
      try {
        await storeUpload(req, res, uuid, signed, etag, ifNoneMatch, slot, () => release?.());
      } finally {
        release?.();
      }
    }),
  );

  async function storeUpload(
    req: Request,
    res: Response,
    uuid: string,
    signed: ReturnType<typeof parseSignedHeaders>,
    etag: string | null,
    ifNoneMatch: ReturnType<typeof parseIfNoneMatch> | null,
    slot: () => Promise<void>,
    release: () => void,
  ): Promise<void> {
    await auth.authenticate(signed);
    const readBody = async (keep: boolean): Promise<UploadBody> => {
      try {
        return await readUploadBody(req, MAX_BACKUP_BYTES, { keep, idleTimeoutMs: bodyIdleTimeoutMs });
      } catch (err) {
        if (err instanceof BodyTooLargeError) throw new ApiError('backup_too_large', { limit_bytes: MAX_BACKUP_BYTES });
        throw err;
      }
    };
    // spec 4.1: If-None-Match is evaluated only when ETag is present too; equal to the stored ETag
    // means 304 and nothing is written. Decided before the body is read (docs/fleet-scale.md): a 304
    // needs no body, so it is only read away and its framing checked (magic and length, as for a
    // stored one: not FFCE is still a 400), without being held; the upload slot is given back first.
    if (etag !== null && ifNoneMatch !== null) {
      const stored = await store.getBackupMeta(uuid);
      if (stored?.etag && etagMatches(stored.etag, ifNoneMatch)) {
        release();
        const { length, head } = await readBody(false);
        if (length < FFCE_MIN_BYTES || length > MAX_BACKUP_BYTES || !head.subarray(0, FFCE_MAGIC.length).equals(FFCE_MAGIC)) {
          throw new ApiError('invalid_backup_format', { min_bytes: FFCE_MIN_BYTES, received_bytes: length });
        }
        log.debug('backup unchanged', { uuid, etag: stored.etag });
        res.setHeader('etag', formatEtag(stored.etag));
        res.status(304).end();
        return;
      }
    }
    await slot();
    const blob = (await readBody(true)).body!;
    if (!isFfceBlob(blob)) {
      throw new ApiError('invalid_backup_format', { min_bytes: FFCE_MIN_BYTES, received_bytes: blob.length });
    }
    const at = new Date(now()).toISOString();
    const meta = await store.putBackup(uuid, blob, etag, at); // gives the blob up (moved to the store's writer)
    log.info('backup stored', { uuid, size: meta.size, etag });
    if (etag) res.setHeader('etag', formatEtag(etag));
    sendJson(res, 200, { message: 'Backup stored', last_backup_date: meta.lastBackupDate });
  }

  router.get(
    '/devices/:uuid/backup',
    route(async (req, res) => {
      const uuid = pathUuid(req);
      const signed = parseSignedHeaders(req.headers, uuid);
      const ifNoneMatch = req.headers['if-none-match'] === undefined ? null : parseIfNoneMatch(req.headers['if-none-match'], 'if-none-match');
      await auth.authenticate(signed);
      const meta = await store.getBackupMeta(uuid);
      if (!meta) throw new ApiError('backup_not_found');
      setBackupHeaders(res, meta.etag, meta.lastBackupDate);
      if (meta.etag && ifNoneMatch !== null && (ifNoneMatch === '*' || ifNoneMatch.includes(meta.etag))) {
        res.status(304).end();
        return;
      }
      const backup = await store.getBackup(uuid);
      if (!backup) throw new ApiError('backup_not_found');
      log.info('backup retrieved', { uuid, size: backup.size });
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': backup.blob.length });
      res.end(backup.blob);
    }),
  );

  router.delete(
    '/devices/:uuid/backup',
    route(async (req, res) => {
      const uuid = pathUuid(req);
      const signed = parseSignedHeaders(req.headers, uuid);
      await auth.authenticate(signed);
      if (!(await store.deleteBackup(uuid))) throw new ApiError('backup_not_found');
      log.info('backup deleted', { uuid });
      res.status(204).end();
    }),
  );

  return router;
}

/** spec 4.1: If-None-Match equal to the stored ETag (or `*` with one stored). */
function etagMatches(stored: string | null | undefined, ifNoneMatch: NonNullable<ReturnType<typeof parseIfNoneMatch>>): boolean {
  return !!stored && (ifNoneMatch === '*' || ifNoneMatch.includes(stored));
}

function setBackupHeaders(res: Response, etag: string | null, lastBackupDate: string): void {
  if (etag) res.setHeader('etag', formatEtag(etag));
  res.setHeader('last-modified', new Date(lastBackupDate).toUTCString());
  res.setHeader('x-last-backup-date', lastBackupDate);
  res.setHeader('cache-control', 'no-store');
}
