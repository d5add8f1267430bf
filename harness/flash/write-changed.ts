// Writing only what differs (docs/rig-flashing.md): before writing an image, the flasher stub is asked
// for the MD5 of the flash under it (SPI_FLASH_MD5, 0x13: offset, size → 16 raw bytes from the stub).
// When the whole image matches, nothing is written; otherwise each 64 KB block of the image is asked
// about and only the blocks that differ are written, consecutive ones as one region (esptool-js's
// writeFlash, which verifies each region). The whole image is then verified as before, with one more
// SPI_FLASH_MD5 over all of it. `force` writes every image whole, as esptool does without --diff.
import { createHash } from 'node:crypto';
import type { ESPLoader } from 'esptool-js';
import { writeImages } from './esptool.ts';

/** The unit of comparison: esptool's erase block, 16 sectors; a region written is on sector boundaries. */
export const COMPARE_BLOCK_BYTES = 0x10000;

export interface ImageToWrite {
  address: number;
  data: Uint8Array;
}

export interface ImageWritten {
  address: number;
  bytes: number;
  /** Bytes of the image found identical on the chip and not sent. */
  skippedBytes: number;
  /** Regions written, as [address, bytes]. */
  regions: [number, number][];
}

export class FlashVerifyError extends Error {
  override name = 'FlashVerifyError';
}

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');

/** esptool-js pads an image to 4 bytes with 0xff before writing; the comparison sees what it writes. */
function padded(data: Uint8Array): Uint8Array {
  if (data.length % 4 === 0) return data;
  const out = new Uint8Array(data.length + 4 - (data.length % 4)).fill(0xff);
  out.set(data);
  return out;
}

/** The regions of `image` (at `address`) that differ from the flash, by the chip's MD5s: [] when it matches whole. */
export async function changedRegions(loader: ESPLoader, image: ImageToWrite, blockBytes = COMPARE_BLOCK_BYTES): Promise<[number, number][]> {
  const data = padded(image.data);
  if ((await loader.flashMd5sum(image.address, data.length)) === md5(data)) return [];
  const regions: [number, number][] = [];
  for (let at = 0; at < data.length; at += blockBytes) {
    const block = data.subarray(at, Math.min(data.length, at + blockBytes));
    if ((await loader.flashMd5sum(image.address + at, block.length)) === md5(block)) continue;
    const last = regions.at(-1);
    if (last && last[0] + last[1] === at) last[1] += block.length;
    else regions.push([at, block.length]);
  }
  return regions;
}

/**
 * Writes the images, skipping what the chip already holds unless `force`, and verifies each whole
 * image against the chip's MD5. `progress` counts bytes of the regions written, per image.
 */
export async function writeChanged(
  loader: ESPLoader,
  images: ImageToWrite[],
  o: { compress: boolean; force?: boolean; eraseAll?: boolean; progress?: (imageIndex: number, written: number, total: number) => void },
): Promise<ImageWritten[]> {
  const out: ImageWritten[] = [];
  if (o.eraseAll) await loader.eraseFlash();
  for (const [index, image] of images.entries()) {
    const data = padded(image.data);
    // After --erase-all the flash holds 0xff everywhere: asking would only find every block different.
    const regions: [number, number][] = o.force || o.eraseAll ? [[0, data.length]] : await changedRegions(loader, image);
    const total = regions.reduce((n, [, bytes]) => n + bytes, 0);
    let before = 0;
    if (total > 0) o.progress?.(index, 0, total);
    for (const [offset, bytes] of regions) {
      await writeImages(loader, [{ address: image.address + offset, data: data.subarray(offset, offset + bytes) }], o.compress, {
        progress: (_i, sent, sentTotal) => o.progress?.(index, before + Math.round((sentTotal ? sent / sentTotal : 1) * bytes), total),
      });
      before += bytes;
    }
    if (regions.length === 0) o.progress?.(index, 0, 0);
    else {
      // The whole image, as a flash without skipping verifies it (with nothing written, changedRegions
      // has just found the chip's MD5 of the whole image equal: no second ask).
      const [onChip, expected] = [await loader.flashMd5sum(image.address, data.length), md5(data)];
      if (onChip !== expected) throw new FlashVerifyError(`MD5 of the image at 0x${image.address.toString(16)} does not match the flash after writing (${onChip}, expected ${expected})`);
    }
    out.push({ address: image.address, bytes: image.data.length, skippedBytes: data.length - total, regions: regions.map(([offset, bytes]) => [image.address + offset, bytes]) });
  }
  return out;
}
