// ESP-IDF app image format (docs: api-reference/system/app_image_format; esp_app_format.h; the
// bootloader's esp_image_format.c reads it, esptool's elf2image writes it):
//
//   esp_image_header_t (24 bytes): magic 0xE9 | segment_count | spi_mode | spi_speed:4 spi_size:4 |
//     entry_addr u32 | wp_pin | spi_pin_drv[3] | chip_id u16 | min_chip_rev | min_chip_rev_full u16 |
//     max_chip_rev_full u16 | reserved[4] | hash_appended
//   then per segment: load_addr u32 | data_len u32 | data (a multiple of 4 bytes)
//   then zero padding so that the checksum byte ends a 16-byte block; the checksum is 0xEF XOR every
//   segment data byte; then, when hash_appended, the SHA-256 of everything before it.
//
// Segments the cache maps (DROM/IROM) must sit at a file offset congruent to their load address
// modulo the 64 KB MMU page; the writer inserts a padding segment (load address 0) when needed.
import { sha256 } from '@noble/hashes/sha2.js';
import { decodeAppDescriptor, type AppDescriptor } from './app-desc.ts';
import { concat, hex, hex32, putU16, putU32, u16, u32 } from './bytes.ts';
import { chipById, isMapped, regionOf, type ChipSpec } from './chips.ts';

export const IMAGE_MAGIC = 0xe9;
export const IMAGE_HEADER_BYTES = 24;
export const SEGMENT_HEADER_BYTES = 8;
/** ESP_IMAGE_MAX_SEGMENTS. */
export const MAX_SEGMENTS = 16;
/** ESP_ROM_CHECKSUM_INITIAL. */
export const CHECKSUM_SEED = 0xef;
const MMU_PAGE_BYTES = 0x10000;
const SIXTEEN_MB = 0x1000000;
const HASH_BYTES = 32;

export const FLASH_MODES = ['qio', 'qout', 'dio', 'dout', 'fast_read', 'slow_read'] as const;
/** spi_speed nibble (ESP32, -S2, -S3, -C3: 80m is 0xF). */
export const FLASH_FREQS: Record<string, number> = { '40m': 0x0, '26m': 0x1, '20m': 0x2, '80m': 0xf };
/** spi_size nibble. */
export const FLASH_SIZES: Record<string, number> = { '1MB': 0, '2MB': 1, '4MB': 2, '8MB': 3, '16MB': 4, '32MB': 5, '64MB': 6, '128MB': 7 };

export interface ImageHeader {
  segmentCount: number;
  flashMode: number;
  flashFreq: number;
  flashSize: number;
  entry: number;
  chipId: number;
  minChipRevFull: number;
  maxChipRevFull: number;
  hashAppended: boolean;
}

export interface SegmentSpec {
  loadAddress: number;
  data: Uint8Array;
}

export interface BuildOptions {
  chip: ChipSpec;
  entry: number;
  segments: SegmentSpec[];
  flashMode?: (typeof FLASH_MODES)[number];
  flashFreq?: keyof typeof FLASH_FREQS;
  flashSize?: keyof typeof FLASH_SIZES;
  minChipRevFull?: number;
  maxChipRevFull?: number;
}

/** Checksum of segment data, as the ROM and the bootloader compute it. */
export function imageChecksum(data: Uint8Array, seed = CHECKSUM_SEED): number {
  let c = seed;
  for (const b of data) c ^= b;
  return c;
}

export function buildAppImage(o: BuildOptions): Uint8Array {
  const parts: Uint8Array[] = [];
  let position = IMAGE_HEADER_BYTES;
  let checksum = CHECKSUM_SEED;
  const segments: SegmentSpec[] = [];
  for (const s of o.segments) {
    const data = s.data.length % 4 === 0 ? s.data : concat([s.data, new Uint8Array(4 - (s.data.length % 4))]);
    if (isMapped(o.chip, s.loadAddress) && (position + SEGMENT_HEADER_BYTES) % MMU_PAGE_BYTES !== s.loadAddress % MMU_PAGE_BYTES) {
      // A padding segment (load address 0, never loaded) moves the mapped one onto its page offset.
      const pad = (s.loadAddress - (position + 2 * SEGMENT_HEADER_BYTES)) & (MMU_PAGE_BYTES - 1);
      segments.push({ loadAddress: 0, data: new Uint8Array(pad) });
      position += SEGMENT_HEADER_BYTES + pad;
    }
    segments.push({ loadAddress: s.loadAddress, data });
    position += SEGMENT_HEADER_BYTES + data.length;
  }
  if (segments.length > MAX_SEGMENTS) throw new RangeError(`${segments.length} segments: an image holds at most ${MAX_SEGMENTS}`);
  const header = new Uint8Array(IMAGE_HEADER_BYTES);
  header[0] = IMAGE_MAGIC;
  header[1] = segments.length;
  header[2] = FLASH_MODES.indexOf(o.flashMode ?? 'dio');
  header[3] = (FLASH_FREQS[o.flashFreq ?? '80m']! & 0x0f) | ((FLASH_SIZES[o.flashSize ?? '8MB']! & 0x0f) << 4);
  putU32(header, 4, o.entry);
  header[8] = 0xee; // wp_pin: disabled (the IDF bootloader configures WP itself)
  putU16(header, 12, o.chip.imageChipId);
  header[14] = Math.floor((o.minChipRevFull ?? 0) / 100); // min_chip_rev (legacy, the major)
  putU16(header, 15, o.minChipRevFull ?? 0);
  putU16(header, 17, o.maxChipRevFull ?? 99);
  header[23] = 1; // hash_appended
  parts.push(header);
  for (const s of segments) {
    const h = new Uint8Array(SEGMENT_HEADER_BYTES);
    putU32(h, 0, s.loadAddress);
    putU32(h, 4, s.data.length);
    parts.push(h, s.data);
    checksum = imageChecksum(s.data, checksum);
  }
  const tail = new Uint8Array(((position + 1 + 15) & ~15) - position);
  tail[tail.length - 1] = checksum;
  parts.push(tail);
  const body = concat(parts);
  return concat([body, sha256(body)]);
}

export interface SegmentInfo {
  index: number;
  loadAddress: number;
  length: number;
  /** Offset of the segment's data from the start of the image. */
  dataOffset: number;
  region: string | undefined;
  mapped: boolean;
}

/** A finding, worded (and tagged) as ESP-IDF's bootloader logs it. */
export interface ImageProblem {
  tag: 'esp_image' | 'boot_comm';
  message: string;
}

export interface ImageCheck {
  header: ImageHeader | null;
  chip: ChipSpec | undefined;
  segments: SegmentInfo[];
  checksum?: { stored: number; calculated: number };
  sha256?: { stored: string; calculated: string };
  /** Bytes the image occupies, appended hash included (what the partition must hold). */
  length: number;
  appDescriptor: AppDescriptor | null;
  problems: ImageProblem[];
  ok: boolean;
}

export interface VerifyOptions {
  /** The chip running the bootloader: an image for another chip is refused. */
  expectedChipId?: number;
  /** Flash address of the image (for messages) and its partition's size (the image must fit). */
  address?: number;
  partitionSize?: number;
}

/**
 * Verifies an image as esp_image_verify does, through `read(offset, length)` (from a file or from
 * flash; may return fewer bytes at the end). Structural faults stop the walk; a bad checksum and a
 * bad hash are both reported. `ok` is what the bootloader would decide.
 */
export function verifyAppImage(read: (offset: number, length: number) => Uint8Array, o: VerifyOptions = {}): ImageCheck {
  const at = o.address ?? 0;
  const result: ImageCheck = { header: null, chip: undefined, segments: [], length: 0, appDescriptor: null, problems: [], ok: false };
  const fail = (message: string, tag: ImageProblem['tag'] = 'esp_image') => (result.problems.push({ tag, message }), result);
  const h = read(0, IMAGE_HEADER_BYTES);
  if (h.length < IMAGE_HEADER_BYTES || h[0] !== IMAGE_MAGIC) return fail(`image at ${hex32(at, 0)} has invalid magic byte (nothing flashed here?)`);
  const header: ImageHeader = {
    segmentCount: h[1]!,
    flashMode: h[2]!,
    flashFreq: h[3]! & 0x0f,
    flashSize: h[3]! >> 4,
    entry: u32(h, 4),
    chipId: u16(h, 12),
    minChipRevFull: u16(h, 15),
    maxChipRevFull: u16(h, 17),
    hashAppended: h[23] === 1,
  };
  result.header = header;
  result.chip = chipById(header.chipId);
  if (o.expectedChipId !== undefined && header.chipId !== o.expectedChipId) return fail(`mismatch chip ID, expected ${o.expectedChipId}, found ${header.chipId}`, 'boot_comm');
  if (header.segmentCount > MAX_SEGMENTS) return fail(`image at ${hex32(at, 0)} segment count ${header.segmentCount} exceeds max ${MAX_SEGMENTS}`);
  const hash = sha256.create().update(h);
  let checksum = CHECKSUM_SEED;
  let position = IMAGE_HEADER_BYTES;
  for (let index = 0; index < header.segmentCount; index++) {
    const sh = read(position, SEGMENT_HEADER_BYTES);
    if (sh.length < SEGMENT_HEADER_BYTES) return fail(`image truncated in the header of segment ${index}`);
    const loadAddress = u32(sh, 0);
    const length = u32(sh, 4);
    if (length % 4 !== 0 || length >= SIXTEEN_MB) return fail(`invalid segment length ${hex32(length, 0)}`);
    const dataOffset = position + SEGMENT_HEADER_BYTES;
    const mapped = isMapped(result.chip, loadAddress);
    result.segments.push({ index, loadAddress, length, dataOffset, region: loadAddress === 0 ? 'PADDING' : regionOf(result.chip, loadAddress), mapped });
    if (mapped && (at + dataOffset) % MMU_PAGE_BYTES !== loadAddress % MMU_PAGE_BYTES) {
      return fail(`Segment ${index} load address ${hex32(loadAddress)}, doesn't match data ${hex32(at + dataOffset)}`);
    }
    if (o.partitionSize !== undefined && dataOffset + length > o.partitionSize) return fail(`Image length ${dataOffset + length} doesn't fit in partition length ${o.partitionSize}`);
    const data = read(dataOffset, length);
    if (data.length < length) return fail(`image truncated in segment ${index} (${data.length} of ${length} bytes)`);
    if (index === 0) result.appDescriptor = decodeAppDescriptor(data);
    checksum = imageChecksum(data, checksum);
    hash.update(sh).update(data);
    position = dataOffset + length;
  }
  const padded = (position + 1 + 15) & ~15;
  const tail = read(position, padded - position);
  if (tail.length < padded - position) return fail('image truncated before its checksum');
  hash.update(tail);
  result.checksum = { stored: tail[tail.length - 1]!, calculated: checksum };
  result.length = padded + (header.hashAppended ? HASH_BYTES : 0);
  if (result.checksum.stored !== checksum) fail(`Checksum failed. Calculated ${hex32(checksum, 0)} read ${hex32(result.checksum.stored, 0)}`);
  if (o.partitionSize !== undefined && result.length > o.partitionSize) fail(`Image length ${result.length} doesn't fit in partition length ${o.partitionSize}`);
  if (header.hashAppended) {
    const stored = read(padded, HASH_BYTES);
    if (stored.length < HASH_BYTES) return fail('image truncated in its appended SHA-256');
    result.sha256 = { stored: hex(stored), calculated: hex(hash.digest()) };
    if (result.sha256.stored !== result.sha256.calculated) fail('Image hash failed - image is corrupt');
  }
  result.ok = result.problems.length === 0;
  return result;
}

/** verifyAppImage over bytes in memory (a file). */
export function verifyAppImageBytes(image: Uint8Array, o: VerifyOptions = {}): ImageCheck {
  return verifyAppImage((offset, length) => image.subarray(offset, offset + length), o);
}
