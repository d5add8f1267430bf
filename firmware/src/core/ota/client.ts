// The OTA client: ask the cloud for the next version (spec 4.1), download it, verify size and SHA-256,
// install it through the HAL, reboot. Any status but 200 from the update check is a hard error, as the
// device firmware update library treats it (spec 4.1), and a manifest older than the running version
// is refused: never a downgrade.
import type { Hal } from '../../hal/index.ts';
import { hexEncode, utf8Decode } from '../bytes.ts';
import { readCloudConfig } from '../cloud/config.ts';
import { drain, readSmallBody } from '../http/respond.ts';
import { parseJson } from '../json-validator.ts';

export class OtaError extends Error {
  constructor(
    readonly code: 'not_provisioned' | 'check_failed' | 'bad_manifest' | 'downgrade' | 'download_failed' | 'size_mismatch' | 'hash_mismatch',
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
  if (typeof manifest.url !== 'string' || typeof manifest.size !== 'number' || typeof manifest.sha256 !== 'string') {
    throw new OtaError('bad_manifest', 'the manifest lacks url, size or sha256');
  }
  const image = await hal.network.request({ method: 'GET', url: manifest.url, headers: {}, timeoutMs: 120_000 });
  if (image.status !== 200) {
    await drain(image.body);
    throw new OtaError('download_failed', `image download answered ${image.status}`, image.status);
  }
  const writer = hal.system.otaBegin(manifest.size);
  const hash = hal.crypto.sha256();
  let size = 0;
  try {
    for (;;) {
      const chunk = await image.body.read();
      if (chunk === null) break;
      size += chunk.length;
      if (size > manifest.size) throw new OtaError('size_mismatch', `the image is larger than ${manifest.size} bytes`);
      hash.update(chunk);
      writer.write(chunk);
    }
    if (size !== manifest.size) throw new OtaError('size_mismatch', `the image has ${size} bytes, not ${manifest.size}`);
    if (hexEncode(hash.digest()) !== manifest.sha256.toLowerCase()) throw new OtaError('hash_mismatch', 'the image SHA-256 does not match the manifest');
  } catch (err) {
    writer.abort();
    await drain(image.body).catch(() => undefined);
    throw err;
  }
  writer.finish();
  if (opts.reboot) hal.timers.setTimeout(() => hal.system.reboot(`ota ${manifest.version}`), 0);
  return { kind: 'installed', version: manifest.version, size };
}
