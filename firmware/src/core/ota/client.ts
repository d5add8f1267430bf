// The OTA client: ask the cloud for the next version (spec 4.1), download it, check that it is the
// image the manifest announced (its esp_app_desc_t names that version and our project), write it into
// the passive slot through the HAL while hashing it, check size and SHA-256 against the manifest,
// let the HAL verify the image and switch otadata (esp_ota_end + esp_ota_set_boot_partition), and
// reboot into it. The new image then runs in PENDING_VERIFY until it confirms itself
// (confirmRunningApp, once the firmware is up); a reset before that rolls it back.
// Any status but 200 from the update check is a hard error, as the device firmware update library
// treats it (spec 4.1); a manifest older than the running version is refused (never a downgrade),
// and so is the version that was rolled back on this board.
import type { Hal, OtaWriter } from '../../hal/index.ts';
import { APP_DESC_BYTES, APP_DESC_IMAGE_OFFSET, appDescriptorOfImage } from '../../../image/app-desc.ts';
import { concatBytes, hexEncode, utf8Decode } from '../bytes.ts';
import { readCloudConfig } from '../cloud/config.ts';
import { drain, readSmallBody } from '../http/respond.ts';
import { parseJson } from '../json-validator.ts';

export class OtaError extends Error {
  constructor(
    readonly code:
      | 'not_provisioned'
      | 'check_failed'
      | 'bad_manifest'
      | 'downgrade'
      | 'rolled_back'
      | 'download_failed'
      | 'size_mismatch'
      | 'hash_mismatch'
      | 'image_mismatch'
      | 'image_invalid'
      | 'ota_refused',
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'OtaError';
  }
}

export type OtaResult = { kind: 'up_to_date'; version: string } | { kind: 'installed'; version: string; size: number };

interface Manifest {
  version: string;
  url?: string;
  size?: number;
  sha256?: string;
}

/** The image header, the first segment's header and esp_app_desc_t: enough to know what the image is. */
const HEAD_BYTES = APP_DESC_IMAGE_OFFSET + APP_DESC_BYTES;

export async function checkAndInstall(hal: Hal, opts: { reboot: boolean }): Promise<OtaResult> {
  const cloud = readCloudConfig(hal.storage);
  if (!cloud) throw new OtaError('not_provisioned', 'no cloud configuration');
  const me = hal.system.identity();
  const url = `${cloud.url}/ota/${encodeURIComponent(me.hardwareClass)}/${encodeURIComponent(me.productHex)}/${encodeURIComponent(me.hardwareClass)}?current_version=${encodeURIComponent(me.firmwareVersion)}`;
  const res = await hal.network.request({ method: 'GET', url, headers: { accept: 'application/json' }, timeoutMs: 30_000 });
  if (res.status !== 200) {
    const text = utf8Decode(await readSmallBody(res.body, 4096).catch(() => new Uint8Array(0)));
    throw new OtaError('check_failed', `update check answered ${res.status}: ${text.slice(0, 200)}`, res.status);
  }
  let manifest: Manifest;
  try {
    manifest = parseJson(await readSmallBody(res.body, 8192)) as Manifest;
  } catch {
    throw new OtaError('bad_manifest', 'the manifest is not JSON');
  }
  if (typeof manifest.version !== 'string' || !/^\d{4}\.\d{2}\.\d{2}$/.test(manifest.version)) throw new OtaError('bad_manifest', 'the manifest has no valid version');
  if (manifest.version === me.firmwareVersion) return { kind: 'up_to_date', version: manifest.version };
  if (manifest.version < me.firmwareVersion) throw new OtaError('downgrade', `refusing ${manifest.version}: older than ${me.firmwareVersion}`);
  const rolledBack = hal.system.lastInvalidApp();
  if (rolledBack && rolledBack.version === manifest.version) {
    // What ESP-IDF's examples do with esp_ota_get_last_invalid_partition: an image that did not come
    // up here is not installed again (a boot loop through the cloud otherwise).
    throw new OtaError('rolled_back', `refusing ${manifest.version}: it was rolled back on this board (${rolledBack.partition}, ${rolledBack.state})`);
  }
  if (typeof manifest.url !== 'string' || typeof manifest.size !== 'number' || typeof manifest.sha256 !== 'string') {
    throw new OtaError('bad_manifest', 'the manifest lacks url, size or sha256');
  }
  const image = await hal.network.request({ method: 'GET', url: manifest.url, headers: {}, timeoutMs: 120_000 });
  if (image.status !== 200) {
    await drain(image.body);
    throw new OtaError('download_failed', `image download answered ${image.status}`, image.status);
  }
  const running = hal.system.runningApp();
  const hash = hal.crypto.sha256();
  let writer: OtaWriter | null = null;
  let head: Uint8Array = new Uint8Array(0);
  let size = 0;
  try {
    for (;;) {
      const chunk = await image.body.read();
      if (chunk === null) break;
      size += chunk.length;
      if (size > manifest.size) throw new OtaError('size_mismatch', `the image is larger than ${manifest.size} bytes`);
      hash.update(chunk);
      if (writer) {
        writer.write(chunk);
        continue;
      }
      // Nothing is written until the head says this is the announced image (esp_https_ota_get_img_desc).
      head = concatBytes(head, chunk);
      if (head.length < HEAD_BYTES) continue;
      checkHead(head, manifest.version, running.projectName);
      writer = begin(hal, manifest.size);
      writer.write(head);
    }
    if (size !== manifest.size) throw new OtaError('size_mismatch', `the image has ${size} bytes, not ${manifest.size}`);
    if (hexEncode(hash.digest()) !== manifest.sha256.toLowerCase()) throw new OtaError('hash_mismatch', 'the image SHA-256 does not match the manifest');
    if (!writer) throw new OtaError('image_mismatch', `the image has only ${size} bytes: not an app image`);
  } catch (err) {
    writer?.abort();
    await drain(image.body).catch(() => undefined);
    throw err;
  }
  try {
    writer.finish();
  } catch (err) {
    throw new OtaError('image_invalid', `the passive slot refused the image: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (opts.reboot) hal.timers.setTimeout(() => hal.system.reboot(`ota ${manifest.version}`), 0);
  return { kind: 'installed', version: manifest.version, size };
}

function checkHead(head: Uint8Array, version: string, projectName: string): void {
  const desc = appDescriptorOfImage(head);
  if (!desc) throw new OtaError('image_mismatch', 'the download is not an ESP-IDF app image with an app descriptor');
  if (desc.version !== version) throw new OtaError('image_mismatch', `the image is version ${desc.version}, the manifest says ${version}`);
  if (projectName !== '' && desc.projectName !== projectName) throw new OtaError('image_mismatch', `the image is for project ${desc.projectName}, this board runs ${projectName}`);
}

function begin(hal: Hal, size: number): OtaWriter {
  try {
    return hal.system.otaBegin(size);
  } catch (err) {
    throw new OtaError('ota_refused', `the passive slot cannot be written: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Called once the firmware is up (booted, listening): a new image confirms itself, so that a later
 * reset no longer rolls it back (esp_ota_mark_app_valid_cancel_rollback). Returns what to log, or
 * null when there was nothing to confirm.
 */
export function confirmRunningApp(hal: Hal): string | null {
  const app = hal.system.runningApp();
  if (app.state !== 'pending_verify') return null;
  hal.system.markAppValid();
  return `firmware ${app.version} in ${app.partition} is up: marked valid, rollback cancelled`;
}
