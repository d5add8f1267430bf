// Encrypted device backups (spec 2.2, 4.1, 5.1, 7): POST, GET and DELETE /devices/{uuid}/backup, all
// authenticated by the device signature headers. The cloud never sees plaintext: it checks the FFCE
// framing, stores the blob with its plaintext ETag as metadata, and records last_backup_date.
// The push (POST) is what a boot storm sends: devices' usual request is answered by `backupFastPath`
// in the node:http listener, in front of Express, with the same function as the Express route
// (cloud/device-fast-path.ts; docs/fleet-scale.md: Express's share of an upload, measured against the fair limit).
import { Router, type Request } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DeviceAuthenticator, parseSignedHeaders } from '../auth/device-signature.ts';
import type { Admission } from '../admission.ts';
import type { BodyPool } from '../body-pool.ts';
import { ApiError } from '../errors.ts';
import { canonicalDeviceUuid, deviceFastPath } from '../device-fast-path.ts';
import { BodyTooLargeError, route, sendJson } from '../http.ts';
import type { FunctionLogger } from '../logging.ts';
import { UuidParams } from '../schema/api.ts';
import { checked, checker } from '../schema/request.ts';
import type { CloudStore } from '../store/types.ts';
import { isFfceBlob, isFfceFraming, MAX_BACKUP_BYTES, FFCE_MIN_BYTES } from './ffce.ts';
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
  /** Where bodies are read into and given back to once stored (cloud/body-pool.ts). */
  bodies?: BodyPool;
}

const checkUuid = checker(UuidParams);

function pathUuid(req: Request): string {
  return checked(checkUuid, { uuid: req.params.uuid }, 'invalid_uuid').uuid;
}

/**
 * POST /devices/{uuid}/backup, on node's request and response (the Express route and the fast path
 * both call it): checks, the 304 decision, the upload gate, authentication, the body, the write.
 */
export function backupPusher({ store, auth, log, now, bodyIdleTimeoutMs, uploads, bodies }: BackupRoutesDeps): (req: IncomingMessage, res: ServerResponse, pathUuid: string) => Promise<void> {
  return async (req, res, rawUuid) => {
    const uuid = checked(checkUuid, { uuid: rawUuid }, 'invalid_uuid').uuid;
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
    // spec 4.1: If-None-Match is evaluated only when ETag is present too; equal to the stored ETag
    // means 304 and nothing is written. Decided once, here, from the stored metadata read before
    // authentication (the answer still waits for it): a push that will be a 304 holds no body and
    // takes no upload slot. Any other push holds a slot of the upload gate from authentication to
    // the store write, so the bodies in memory at once are bounded, and past the gate's queue the
    // device is told to come back (503; docs/fleet-scale.md).
    const stored = etag !== null && ifNoneMatch !== null ? await store.getBackupMeta(uuid) : null;
    const unchangedEtag = stored?.etag && ifNoneMatch !== null && etagMatches(stored.etag, ifNoneMatch) ? stored.etag : null;
    const release = unchangedEtag === null && uploads ? await uploads.acquire() : undefined;
    try {
      await storeUpload(req, res, uuid, signed, etag, unchangedEtag);
    } finally {
      release?.();
    }
  };

  /** After authentication: a 304 when `unchangedEtag` is set (the body only read away), else the blob stored. */
  async function storeUpload(
    req: IncomingMessage,
    res: ServerResponse,
    uuid: string,
    signed: ReturnType<typeof parseSignedHeaders>,
    etag: string | null,
    unchangedEtag: string | null,
  ): Promise<void> {
    await auth.authenticate(signed);
    const readBody = async (keep: boolean): Promise<UploadBody> => {
      try {
        return await readUploadBody(req, MAX_BACKUP_BYTES, { keep, idleTimeoutMs: bodyIdleTimeoutMs, ...(bodies ? { alloc: (n: number) => bodies.take(n) } : {}) });
      } catch (err) {
        if (err instanceof BodyTooLargeError) throw new ApiError('backup_too_large', { limit_bytes: MAX_BACKUP_BYTES });
        throw err;
      }
    };
    // A 304 needs no body (docs/fleet-scale.md): it is only read away and its framing checked (magic
    // and length, as for a stored one: not FFCE is still a 400), without being held.
    if (unchangedEtag !== null) {
      const { length, head } = await readBody(false);
      if (!isFfceFraming(length, head)) {
        throw new ApiError('invalid_backup_format', { min_bytes: FFCE_MIN_BYTES, received_bytes: length });
      }
      log.debug('backup unchanged', { uuid, etag: unchangedEtag });
      res.setHeader('etag', formatEtag(unchangedEtag));
      res.statusCode = 304;
      res.end();
      return;
    }
    const blob = (await readBody(true)).body!;
    if (!isFfceBlob(blob)) {
      throw new ApiError('invalid_backup_format', { min_bytes: FFCE_MIN_BYTES, received_bytes: blob.length });
    }
    const at = new Date(now()).toISOString();
    // The store reads the blob until this settles (or moves it to its writer thread); then it is reused.
    const meta = await store.putBackup(uuid, blob, etag, at).finally(() => bodies?.give(blob));
    log.info('backup stored', { uuid, size: meta.size, etag });
    if (etag) res.setHeader('etag', formatEtag(etag));
    sendJson(res, 200, { message: 'Backup stored', last_backup_date: meta.lastBackupDate });
  }
}

/** `/devices/{uuid}/backup` exactly as devices send it: the raw UUID segment; undefined for any other target. */
export const canonicalPushUuid = (url: string): string | undefined => canonicalDeviceUuid(url, '/backup');

/** Answers the canonical push before Express (cloud/device-fast-path.ts), with the Express route's function. */
export const backupFastPath = (push: ReturnType<typeof backupPusher>, log: FunctionLogger) => deviceFastPath('/backup', push, log);

export function backupRoutes(deps: BackupRoutesDeps): Router {
  const { store, auth, log } = deps;
  const router = Router();
  const push = backupPusher(deps);
  router.post(
    '/devices/:uuid/backup',
    route(async (req, res) => push(req, res, req.params.uuid as string)),
  );

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
function etagMatches(stored: string, ifNoneMatch: NonNullable<ReturnType<typeof parseIfNoneMatch>>): boolean {
  return ifNoneMatch === '*' || ifNoneMatch.includes(stored);
}

function setBackupHeaders(res: ServerResponse, etag: string | null, lastBackupDate: string): void {
  if (etag) res.setHeader('etag', formatEtag(etag));
  res.setHeader('last-modified', new Date(lastBackupDate).toUTCString());
  res.setHeader('x-last-backup-date', lastBackupDate);
  res.setHeader('cache-control', 'no-store');
}
