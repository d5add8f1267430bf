// A virtual board's app image (DESIGN.md section 7): an ordinary ESP-IDF app image whose first
// (DROM) segment holds the esp_app_desc_t and, right after it, the firmware a virtual chip runs: the
// product built by the Moddable SDK for the Linux host (an mc.so, firmware/sdk-host), deflated, framed
// so that it is found again:
//
//   esp_app_desc_t (256) | "MCSO" | format u32 = 2 | payload length u32 | firmware length u32 | payload
//
// A small IRAM segment holds the entry point the header names; nothing executes it (the virtual chip
// loads the firmware, docs/flash-and-boot.md). Everything else about the image (checksum, appended
// SHA-256, chip id, segment alignment) is what ESP-IDF's bootloader checks on a real chip. The
// descriptor's ELF SHA-256 is the firmware's.
import { sha256 } from '@noble/hashes/sha2.js';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { APP_DESC_BYTES, encodeAppDescriptor } from './app-desc.ts';
import { buildAppImage } from './app-image.ts';
import { concat, hex, putU32, u32 } from './bytes.ts';
import type { ChipSpec } from './chips.ts';

/** "MCSO": marks the firmware after the descriptor. */
const PAYLOAD_MAGIC = [0x4d, 0x43, 0x53, 0x4f];
const PAYLOAD_FORMAT = 2;
const PAYLOAD_HEADER_BYTES = 16;
/** esp_app_desc_t.idf_ver of a virtual image: no ESP-IDF built it. */
export const VIRTUAL_IDF_VERSION = 'moddable-sdk-lin';
export const DEFAULT_PROJECT_NAME = 'esp32-fleet';
/** The product's version grammar (DESIGN.md section 4: YYYY.MM.bb). */
export const VERSION_PATTERN = /^\d{4}\.\d{2}\.\d{2}$/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export interface VirtualImageOptions {
  chip: ChipSpec;
  version: string;
  /** The firmware the virtual chip loads (an mc.so); any bytes, for images that must not start. */
  firmware: Uint8Array;
  projectName?: string;
  /** __DATE__-style build date ("Mar  1 2026"); by default derived from the version, so builds repeat exactly. */
  date?: string;
  time?: string;
  secureVersion?: number;
  /**
   * Bytes of constant data after the firmware in the first segment (a product's fonts and pages):
   * incompressible, never loaded by the virtual chip, so that an image can have a real product's size.
   */
  dataBytes?: number;
}

/** "2026.03.01" → "Mar  1 2026" (the C preprocessor's __DATE__ layout). */
export function dateOfVersion(version: string): string {
  const [y, m, d] = version.split('.').map(Number) as [number, number, number];
  const month = MONTHS[Math.min(Math.max(m, 1), 12) - 1]!;
  return `${month} ${String(Math.min(Math.max(d, 1), 31)).padStart(2, ' ')} ${y}`;
}

export function buildVirtualAppImage(o: VirtualImageOptions): Uint8Array {
  if (!VERSION_PATTERN.test(o.version)) throw new RangeError(`version must be YYYY.MM.bb: ${JSON.stringify(o.version)}`);
  const payload = deflateRawSync(o.firmware, { level: 6 });
  const descriptor = encodeAppDescriptor({
    secureVersion: o.secureVersion ?? 0,
    version: o.version,
    projectName: o.projectName ?? DEFAULT_PROJECT_NAME,
    time: o.time ?? '00:00:00',
    date: o.date ?? dateOfVersion(o.version),
    idfVersion: VIRTUAL_IDF_VERSION,
    elfSha256: hex(sha256(o.firmware)),
    minEfuseBlockRevision: 0,
    maxEfuseBlockRevision: 199,
    mmuPageSizeLog2: 16,
  });
  const payloadHeader = new Uint8Array(PAYLOAD_HEADER_BYTES);
  payloadHeader.set(PAYLOAD_MAGIC, 0);
  putU32(payloadHeader, 4, PAYLOAD_FORMAT);
  putU32(payloadHeader, 8, payload.length);
  putU32(payloadHeader, 12, o.firmware.length);
  const drom = o.chip.memory.find((r) => r.name === 'DROM');
  const iram = o.chip.memory.find((r) => r.name === 'IRAM') ?? o.chip.memory.find((r) => r.name === 'DRAM');
  if (!drom || !iram) throw new RangeError(`no DROM or IRAM region known for ${o.chip.displayName}`);
  // DROM data at file offset 0x20 maps at DROM start + 0x20 (same offset in its 64 KB page).
  const entry = iram.start + 0x4000;
  return buildAppImage({
    chip: o.chip,
    entry,
    segments: [
      { loadAddress: drom.start + 0x20, data: concat([descriptor, payloadHeader, payload, constantData(o.dataBytes ?? 0)]) },
      { loadAddress: entry, data: new TextEncoder().encode('MC-HOST\0') },
    ],
  });
}

/** Bytes deflate cannot shrink (a SHA-256 chain), the same for every call. */
function constantData(bytes: number): Uint8Array {
  const data = new Uint8Array(bytes);
  let block = sha256(new TextEncoder().encode('virtual-image-data'));
  for (let at = 0; at < bytes; at += block.length) {
    data.set(block.subarray(0, Math.min(block.length, bytes - at)), at);
    block = sha256(block);
  }
  return data;
}

/**
 * The firmware of a verified image, given its first segment's data; null for an image that carries
 * none (one built by ESP-IDF or the Moddable SDK for a chip: native code, which a virtual board
 * cannot run) or whose payload does not inflate to the length it names.
 */
export function virtualFirmwareOf(firstSegment: Uint8Array): Uint8Array | null {
  const at = APP_DESC_BYTES;
  if (firstSegment.length < at + PAYLOAD_HEADER_BYTES) return null;
  if (!PAYLOAD_MAGIC.every((b, i) => firstSegment[at + i] === b) || u32(firstSegment, at + 4) !== PAYLOAD_FORMAT) return null;
  const length = u32(firstSegment, at + 8);
  const start = at + PAYLOAD_HEADER_BYTES;
  if (start + length > firstSegment.length) return null;
  try {
    const firmware = inflateRawSync(firstSegment.subarray(start, start + length));
    return firmware.length === u32(firstSegment, at + 12) ? new Uint8Array(firmware.buffer, firmware.byteOffset, firmware.length) : null;
  } catch {
    return null;
  }
}
