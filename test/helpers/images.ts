// Small ESP-IDF app images for the cloud's release checks: a real app image (header, segments,
// checksum, appended SHA-256, esp_app_desc_t) around a filler instead of the firmware the Moddable SDK
// builds (an mc.so), so that tests need not build the firmware. firmwareImage()
// (firmware/sdk-host/firmware-image.ts) is the one virtual boards run.
import { createHash } from 'node:crypto';
import { chipByName } from '../../firmware/image/chips.ts';
import { buildVirtualAppImage } from '../../firmware/image/virtual-payload.ts';

/**
 * An image of about `bytes` bytes of payload (default 8 KB): the payload is deflated into the image,
 * so the filler is bytes deflate cannot shrink (a SHA-256 chain; the same for every call).
 */
export function appImage(version: string, o: { chip?: string; project?: string; bytes?: number } = {}): Buffer {
  const bytes = o.bytes ?? 8192;
  const filler = Buffer.alloc(bytes);
  let block = createHash('sha256').update('fleet-image-test').digest();
  for (let at = 0; at < bytes; at += block.length) {
    block.copy(filler, at);
    block = createHash('sha256').update(block).digest();
  }
  return Buffer.from(buildVirtualAppImage({ chip: chipByName(o.chip ?? 'esp32s3'), version, firmware: new Uint8Array(filler), ...(o.project ? { projectName: o.project } : {}) }));
}

export const sha256Hex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
