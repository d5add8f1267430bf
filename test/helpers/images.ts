// Small ESP-IDF app images for the cloud's release checks: a real app image (header, segments,
// checksum, appended SHA-256, esp_app_desc_t) around a filler instead of the firmware bundle, so that
// tests need not bundle the firmware. firmwareImage() (firmware/host) is the one virtual boards run.
import { createHash } from 'node:crypto';
import { chipByName } from '../../firmware/image/chips.ts';
import { buildVirtualAppImage } from '../../firmware/image/xs-payload.ts';

export function appImage(version: string, o: { chip?: string; project?: string; bytes?: number } = {}): Buffer {
  const filler = 'fleet-image-test '.repeat(Math.ceil((o.bytes ?? 8192) / 17)).slice(0, o.bytes ?? 8192);
  return Buffer.from(buildVirtualAppImage({ chip: chipByName(o.chip ?? 'esp32s3'), version, bundle: filler, ...(o.project ? { projectName: o.project } : {}) }));
}

export const sha256Hex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
