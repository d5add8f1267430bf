// The OTA client: ask the cloud for the next version (spec 4.1), download it, check that it is the
// image the manifest announced (its esp_app_desc_t names that version and our project), write it into
// the passive slot through the HAL while hashing it, check size and SHA-256 against the manifest,
// let the HAL verify the image and switch otadata (esp_ota_end + esp_ota_set_boot_partition), and
// reboot into it. The new image then runs in PENDING_VERIFY until it confirms itself
// (confirmRunningApp, once the firmware is up); a reset before that rolls it back.
// Any status but 200 from the update check is a hard error, as the device firmware update library
// treats it (spec 4.1); a manifest older than the running version is refused (never a downgrade),
// and so is the version that was rolled back on this board.
// The check names the board (X-Device-UUID): the cloud's staged rollouts and inventory use it
// (docs/device-inventory.md). A download cut half way resumes where it stopped, with a range request
// (If-Range: the image's ETag) after reconnecting; the SHA-256 of the whole image is still checked
// before the slot is switched (docs/firmware-images.md).
// The chip checks the image's Secure Boot v2 signature (and, with anti-rollback, its secure_version)
// before it marks the slot for boot: a refusal is signature_invalid or secure_version_too_low, the
// board does not reboot, and the client checks once more naming the version it still runs, which the
// cloud counts as a failed install of the version offered (docs/secure-boot.md, "The OTA client").
import type { BodyReader, ClientRequest } from '../../hal/network.ts';
import type { Hal, OtaWriter } from '../../hal/index.ts';
import { APP_DESC_BYTES, APP_DESC_IMAGE_OFFSET, appDescriptorOfImage } from '../../../image/app-desc.ts';
import { concatBytes, hexEncode, utf8Decode } from '../bytes.ts';
import { readCloudConfig } from '../cloud/config.ts';
import { drain } from '../body.ts';
import { delay } from '../delay.ts';
import { readSmallBody } from '../http/respond.ts';
import { parseJson } from '../json-validator.ts';
import { rebootSoon } from '../reboot.ts';
import { failureOf, type UpdateFailure, type UpdateStep } from '../health/outcomes.ts';

export class OtaError extends Error {
  // A field (defined on the instance), not `this.name =` in the constructor: Error.prototype is
  // frozen in the firmware's preloaded archive, and assigning over its read-only `name` throws.
  override name = 'OtaError';
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
      | 'signature_invalid'
      | 'secure_version_too_low'
      | 'no_space'
      | 'refused_unconfirmed'
      | 'ota_refused',
    message: string,
    readonly status?: number,
  ) {
    super(message);
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
/** A cut download is resumed this many times at most, waiting RESUME_DELAY_MS more each time. */
export const MAX_RESUMES = 3;
const RESUME_DELAY_MS = 500;
const IMAGE_TIMEOUT_MS = 120_000;

/**
 * Who hears how an update goes (core/health/reporter.ts): each step, and its end, once the board has
 * decided to take a release (a valid manifest of a newer version it has not rolled back).
 */
export interface UpdateObserver {
  updateStep(version: string, step: UpdateStep): void;
  updateInstalled(version: string): void;
  updateFailed(version: string, reason: UpdateFailure, detail: string): void;
}

export async function checkAndInstall(hal: Hal, opts: { reboot: boolean; updates?: UpdateObserver }): Promise<OtaResult> {
  const cloud = readCloudConfig(hal.storage);
  if (!cloud) throw new OtaError('not_provisioned', 'no cloud configuration');
  const me = hal.system.identity();
  const url = `${cloud.url}/ota/${encodeURIComponent(me.hardwareClass)}/${encodeURIComponent(me.productHex)}/${encodeURIComponent(me.hardwareClass)}?current_version=${encodeURIComponent(me.firmwareVersion)}`;
  const check: ClientRequest = { method: 'GET', url, headers: { accept: 'application/json', 'x-device-uuid': me.uuid }, timeoutMs: 30_000 };
  const res = await hal.network.request(check);
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
  const wanted = { version: manifest.version, url: manifest.url, size: manifest.size, sha256: manifest.sha256 };
  try {
    return await install(hal, check, wanted, opts);
  } catch (err) {
    if (err instanceof OtaError) opts.updates?.updateFailed(wanted.version, failureOf(err.code), err.message);
    else opts.updates?.updateFailed(wanted.version, 'image_invalid', err instanceof Error ? err.message : String(err));
    throw err;
  }
}

/** The update itself: the image downloaded, checked and written into the passive slot, then selected. */
async function install(hal: Hal, check: ClientRequest, manifest: Required<Manifest>, opts: { reboot: boolean; updates?: UpdateObserver }): Promise<OtaResult> {
  // What esp_https_ota checks before it erases anything.
  if (hal.system.runningApp().state === 'pending_verify') throw new OtaError('refused_unconfirmed', `refusing ${manifest.version} for now: the running image is not confirmed yet`);
  const slotBytes = hal.system.otaSlotBytes();
  if (manifest.size > slotBytes) throw new OtaError('no_space', `${manifest.version} has ${manifest.size} bytes: the passive slot holds ${slotBytes}`);
  opts.updates?.updateStep(manifest.version, 'downloading');
  const image = await hal.network.request({ method: 'GET', url: manifest.url, headers: {}, timeoutMs: IMAGE_TIMEOUT_MS });
  if (image.status !== 200) {
    await drain(image.body);
    throw new OtaError('download_failed', `image download answered ${image.status}`, image.status);
  }
  const running = hal.system.runningApp();
  // A strong ETag names this very image: a resumed range is only taken from the same one (If-Range).
  const etag = /^"[^"]*"$/.test(image.headers.etag ?? '') ? image.headers.etag! : undefined;
  let body: BodyReader = image.body;
  let hash = hal.crypto.sha256();
  let writer: OtaWriter | null = null;
  let head: Uint8Array = new Uint8Array(0);
  let size = 0;
  let resumes = 0;
  try {
    for (;;) {
      let chunk: Uint8Array | null;
      let cut: string | undefined;
      try {
        chunk = await body.read();
        if (chunk === null && size < manifest.size) cut = `the connection ended at ${size} of ${manifest.size} bytes`;
      } catch (err) {
        chunk = null;
        cut = `the connection broke at ${size} of ${manifest.size} bytes (${err instanceof Error ? err.message : String(err)})`;
      }
      if (cut !== undefined) {
        if (++resumes > MAX_RESUMES) throw new OtaError('download_failed', `${cut}; gave up after ${MAX_RESUMES} resumes`);
        await delay(hal, RESUME_DELAY_MS * resumes);
        const rest = await resume(hal, manifest.url, size, manifest.size, etag);
        body = rest.body;
        if (rest.from === 0 && size > 0) {
          // The server sent the whole image again (it ignored the range, or the image changed): start over.
          writer?.abort();
          writer = null;
          head = new Uint8Array(0);
          size = 0;
          hash = hal.crypto.sha256();
        }
        continue;
      }
      if (chunk === null) break;
      size += chunk.length;
      if (size > manifest.size) throw new OtaError('size_mismatch', `the image is larger than ${manifest.size} bytes`);
      hash.update(chunk);
      if (writer) {
        writeSlot(writer, chunk);
        continue;
      }
      // Nothing is written until the head says this is the announced image (esp_https_ota_get_img_desc).
      head = concatBytes(head, chunk);
      if (head.length < HEAD_BYTES) continue;
      checkHead(head, manifest.version, running.projectName);
      writer = begin(hal, manifest.size);
      writeSlot(writer, head);
    }
    if (size !== manifest.size) throw new OtaError('size_mismatch', `the image has ${size} bytes, not ${manifest.size}`);
    if (hexEncode(hash.digest()) !== manifest.sha256.toLowerCase()) throw new OtaError('hash_mismatch', 'the image SHA-256 does not match the manifest');
    if (!writer) throw new OtaError('image_mismatch', `the image has only ${size} bytes: not an app image`);
  } catch (err) {
    writer?.abort();
    await drain(body).catch(() => undefined);
    throw err;
  }
  opts.updates?.updateStep(manifest.version, 'installing');
  try {
    writer.finish();
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const code = (err as { code?: unknown }).code;
    const refusal =
      code === 'signature_invalid' || code === 'secure_version_too_low'
        ? new OtaError(code, `refusing ${manifest.version}: ${why}`)
        : new OtaError('image_invalid', `the passive slot refused the image: ${why}`);
    await reportFailedInstall(hal, check);
    throw refusal;
  }
  opts.updates?.updateInstalled(manifest.version);
  if (opts.reboot) rebootSoon(hal, `ota ${manifest.version}`);
  return { kind: 'installed', version: manifest.version, size };
}

/** esp_ota_write: what the slot refuses (an image that is no app image, a write past its end) is the image's fault. */
function writeSlot(writer: OtaWriter, bytes: Uint8Array): void {
  try {
    writer.write(bytes);
  } catch (err) {
    throw new OtaError('image_invalid', `the passive slot refused the image: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * The rest of a cut download: `Range: bytes=<received>-`, If-Range with the image's ETag. A 206 must
 * continue exactly at `received`; a 200 is the whole image again (from 0).
 */
async function resume(hal: Hal, url: string, received: number, total: number, etag: string | undefined): Promise<{ body: BodyReader; from: number }> {
  let res;
  try {
    res = await hal.network.request({ method: 'GET', url, headers: { range: `bytes=${received}-`, ...(etag ? { 'if-range': etag } : {}) }, timeoutMs: IMAGE_TIMEOUT_MS });
  } catch (err) {
    // Not reachable yet: an empty body that ends at once, so that the loop counts another resume.
    return { body: { read: async () => null }, from: received };
  }
  if (res.status === 200) return { body: res.body, from: 0 };
  const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(res.headers['content-range'] ?? '');
  if (res.status !== 206 || !range || Number(range[1]) !== received || Number(range[3]) !== total) {
    await drain(res.body).catch(() => undefined);
    throw new OtaError('download_failed', `resuming the download at byte ${received} answered ${res.status} ${res.headers['content-range'] ?? ''}`.trim(), res.status);
  }
  return { body: res.body, from: received };
}

/**
 * The chip refused the downloaded image: one more update check naming the version still running, so
 * that the cloud settles the offer as a failed install now (an offered device that reports its old
 * version failed: docs/staged-rollouts.md, "Outcomes and the error threshold") rather than at the
 * next check. Its answer is not used; an unreachable cloud learns it at the next check instead.
 */
async function reportFailedInstall(hal: Hal, check: ClientRequest): Promise<void> {
  try {
    const res = await hal.network.request(check);
    await drain(res.body);
  } catch {
    // the next check reports it
  }
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
