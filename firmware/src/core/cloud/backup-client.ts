// Cloud backup from the device (spec 4.2): push /backup.json encrypted on-device into an FFCE v1 blob,
// retrieve and decrypt it, delete it; every request signed with the device identity key
// (DESIGN.md section 3). Bodies stream in chunks both ways.
import type { Hal } from '../../hal/index.ts';
import type { BodyReader, ClientResponse } from '../../hal/network.ts';
import { utf8Decode } from '../bytes.ts';
import { createFfceDecryptor, createFfceEncryptor, FfceError } from '../crypto/ffce.ts';
import { DeviceError, errors } from '../errors.ts';
import { drain } from '../body.ts';
import { unquoteEtag } from '../http/etag.ts';
import { readSmallBody } from '../http/respond.ts';
import type { LocalBackupStore } from '../backup/local-store.ts';
import { readCloudConfig } from './config.ts';
import { signatureHeaders } from './device-signature.ts';
import { parseJson } from '../json-validator.ts';

const REQUEST_TIMEOUT_MS = 30_000;
const FFCE_OVERHEAD = 32;

export interface DeviceKeys {
  backupKey: Uint8Array;
  identityKey: Uint8Array;
}

export class CloudBackupClient {
  constructor(
    private readonly hal: Hal,
    private readonly keys: DeviceKeys,
    private readonly local: LocalBackupStore,
    private readonly chunkBytes: number,
  ) {}

  /** Spec 4.2 POST /api/cloud-backup: 200, 204 and 304 from the cloud are success. */
  async push(): Promise<{ result: 'stored' | 'unchanged'; etag: string; last_backup_date?: string }> {
    const base = this.preconditions();
    const size = this.local.size();
    const etag = this.local.etag();
    if (size === null || etag === null) throw errors.notFound('no_local_backup', 'There is no local /backup.json');
    const encryptor = createFfceEncryptor(this.hal.crypto, this.keys.backupKey, this.hal.crypto.randomBytes(12));
    const plain = this.local.reader();
    let stage: 'header' | 'body' | 'done' = 'header';
    const body: BodyReader = {
      read: async () => {
        if (stage === 'header') {
          stage = 'body';
          return encryptor.header();
        }
        if (stage === 'done') return null;
        const chunk = await plain.read();
        if (chunk !== null) return encryptor.update(chunk);
        stage = 'done';
        return encryptor.finish();
      },
    };
    const res = await this.send('POST', base, {
      'content-type': 'application/octet-stream',
      etag: `"${etag}"`,
      'if-none-match': `"${etag}"`,
    }, body, size + FFCE_OVERHEAD);
    if (res.status === 304) {
      await drain(res.body);
      return { result: 'unchanged', etag };
    }
    if (res.status === 200 || res.status === 204) {
      const text = res.status === 200 ? utf8Decode(await readSmallBody(res.body, 4096)) : '';
      let date: string | undefined;
      try {
        date = (parseJson(text) as { last_backup_date?: string }).last_backup_date;
      } catch {
        date = undefined;
      }
      return { result: 'stored', etag, ...(date ? { last_backup_date: date } : {}) };
    }
    throw await this.cloudError(res);
  }

  /**
   * Spec 4.2 GET /api/cloud-backup: download, decrypt on-device, write /backup.json (and its ETag).
   * The tag is checked before the new file replaces the old one: a blob of another board (another
   * fuse key) leaves the local backup untouched.
   */
  async retrieve(): Promise<{ etag: string; size: number }> {
    const base = this.preconditions();
    const res = await this.send('GET', base, {});
    if (res.status !== 200) throw await this.cloudError(res);
    const decryptor = createFfceDecryptor(this.hal.crypto, this.keys.backupKey);
    const writer = this.local.begin();
    try {
      for (;;) {
        let chunk: Uint8Array | null;
        try {
          chunk = await res.body.read();
        } catch (err) {
          // The connection broke mid-download: the cloud could not be reached to the end, which is
          // neither the key's fault (422) nor the board's (500).
          throw errors.conflict('cloud_unreachable', `The cloud connection broke during the download (${err instanceof Error ? err.message : String(err)}); the local backup is unchanged`);
        }
        if (chunk === null) break;
        const plain = decryptor.update(chunk);
        if (plain.length > 0) writer.write(plain);
      }
      decryptor.finish();
    } catch (err) {
      writer.abort();
      await drain(res.body).catch(() => undefined);
      if (err instanceof FfceError) {
        throw new DeviceError(422, 'backup_decrypt_failed', `The cloud backup cannot be decrypted by this device (${err.code}); the local backup is unchanged`);
      }
      throw err;
    }
    return writer.commit();
  }

  /**
   * GET /api/cloud-backup/info (docs/firmware-api.md): what the cloud holds for this device, without
   * the blob and without changing anything. Asked with `If-None-Match: *`: the cloud answers 304 with
   * the stored backup's ETag and date (its GET route, cloud/backup/routes.ts), or 404 when it has none.
   */
  async info(): Promise<{ stored: false } | { stored: true; etag: string | null; last_backup_date: string | null; same_as_local: boolean }> {
    const base = this.preconditions();
    const res = await this.send('GET', base, { 'if-none-match': '*' });
    if (res.status === 404) {
      await drain(res.body);
      return { stored: false };
    }
    if (res.status !== 304 && res.status !== 200) throw await this.cloudError(res);
    await drain(res.body);
    const etag = unquoteEtag(res.headers['etag']);
    const date = res.headers['x-last-backup-date'] ?? null;
    return { stored: true, etag, last_backup_date: date, same_as_local: etag !== null && etag === this.local.etag() };
  }

  /** Spec 4.2 DELETE /api/cloud-backup: the cloud copy, then the local one. */
  async remove(): Promise<void> {
    const base = this.preconditions();
    const res = await this.send('DELETE', base, {});
    if (res.status !== 204 && res.status !== 200) throw await this.cloudError(res);
    await drain(res.body);
    this.local.remove();
  }

  private preconditions(): string {
    const config = readCloudConfig(this.hal.storage);
    if (!config) throw errors.conflict('not_provisioned', 'The device is not provisioned for the cloud (no cloud configuration)');
    if (!this.hal.clock.synchronized()) throw errors.unavailable('clock_not_synchronized', 'The device clock is not synchronized');
    return config.url;
  }

  private async send(method: string, base: string, headers: Record<string, string>, body?: BodyReader, bodyLength?: number): Promise<ClientResponse> {
    const uuid = this.hal.system.identity().uuid;
    try {
      return await this.hal.network.request({
        method,
        url: `${base}/devices/${encodeURIComponent(uuid)}/backup`,
        headers: { ...signatureHeaders(this.hal, this.keys.identityKey, uuid), ...headers },
        ...(body ? { body, bodyLength } : {}),
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
    } catch (err) {
      throw errors.conflict('cloud_unreachable', `The cloud cannot be reached: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private async cloudError(res: ClientResponse): Promise<DeviceError> {
    let code: string | undefined;
    try {
      code = (parseJson(await readSmallBody(res.body, 4096)) as { error?: string }).error;
    } catch {
      code = undefined;
    }
    if (res.status === 404) return errors.notFound('no_cloud_backup', 'There is no backup of this device in the cloud');
    if (res.status === 401 && code === 'unknown_device') {
      return errors.conflict('not_provisioned', 'The device is not registered with the cloud');
    }
    return new DeviceError(502, 'cloud_error', `The cloud answered ${res.status}${code ? ` ${code}` : ''}`, { cloud_status: res.status, ...(code ? { cloud_error: code } : {}) });
  }
}
