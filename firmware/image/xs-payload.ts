// A virtual board's app image (DESIGN.md section 7): an ordinary ESP-IDF app image whose first
// (DROM) segment holds the esp_app_desc_t and, right after it, the XS firmware bundle the virtual
// board's boot stage evaluates, framed so that it is found again:
//
//   esp_app_desc_t (256) | "XSFW" | format u32 = 1 | bundle length u32 | reserved u32 | bundle (UTF-8)
//
// A small IRAM segment holds the entry point the header names; nothing executes it (the host runs
// the bundle, docs/flash-and-boot.md). Everything else about the image (checksum, appended SHA-256,
// chip id, segment alignment) is what ESP-IDF's bootloader checks on a real chip.
import { sha256 } from '@noble/hashes/sha2.js';
import { APP_DESC_BYTES, encodeAppDescriptor } from './app-desc.ts';
import { buildAppImage } from './app-image.ts';
import { concat, hex, putU32, u32 } from './bytes.ts';
import type { ChipSpec } from './chips.ts';

/** "XSFW": marks the bundle after the descriptor. */
const PAYLOAD_MAGIC = [0x58, 0x53, 0x46, 0x57];
const PAYLOAD_FORMAT = 1;
const PAYLOAD_HEADER_BYTES = 16;
/** esp_app_desc_t.idf_ver of a virtual image: no ESP-IDF built it. */
export const VIRTUAL_IDF_VERSION = 'xs-virtual-board';
export const DEFAULT_PROJECT_NAME = 'esp32-fleet';
/** The product's version grammar (DESIGN.md section 4: YYYY.MM.bb). */
export const VERSION_PATTERN = /^\d{4}\.\d{2}\.\d{2}$/;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export interface VirtualImageOptions {
  chip: ChipSpec;
  version: string;
  bundle: string;
  projectName?: string;
  /** __DATE__-style build date ("Mar  1 2026"); by default derived from the version, so builds repeat exactly. */
  date?: string;
  time?: string;
  secureVersion?: number;
}

/** "2026.03.01" → "Mar  1 2026" (the C preprocessor's __DATE__ layout). */
export function dateOfVersion(version: string): string {
  const [y, m, d] = version.split('.').map(Number) as [number, number, number];
  const month = MONTHS[Math.min(Math.max(m, 1), 12) - 1]!;
  return `${month} ${String(Math.min(Math.max(d, 1), 31)).padStart(2, ' ')} ${y}`;
}

export function buildVirtualAppImage(o: VirtualImageOptions): Uint8Array {
  if (!VERSION_PATTERN.test(o.version)) throw new RangeError(`version must be YYYY.MM.bb: ${JSON.stringify(o.version)}`);
  const bundle = new TextEncoder().encode(o.bundle);
  const descriptor = encodeAppDescriptor({
    secureVersion: o.secureVersion ?? 0,
    version: o.version,
    projectName: o.projectName ?? DEFAULT_PROJECT_NAME,
    time: o.time ?? '00:00:00',
    date: o.date ?? dateOfVersion(o.version),
    idfVersion: VIRTUAL_IDF_VERSION,
    elfSha256: hex(sha256(bundle)),
    minEfuseBlockRevision: 0,
    maxEfuseBlockRevision: 199,
    mmuPageSizeLog2: 16,
  });
  const payloadHeader = new Uint8Array(PAYLOAD_HEADER_BYTES);
  payloadHeader.set(PAYLOAD_MAGIC, 0);
  putU32(payloadHeader, 4, PAYLOAD_FORMAT);
  putU32(payloadHeader, 8, bundle.length);
  const drom = o.chip.memory.find((r) => r.name === 'DROM');
  const iram = o.chip.memory.find((r) => r.name === 'IRAM') ?? o.chip.memory.find((r) => r.name === 'DRAM');
  if (!drom || !iram) throw new RangeError(`no DROM or IRAM region known for ${o.chip.displayName}`);
  // DROM data at file offset 0x20 maps at DROM start + 0x20 (same offset in its 64 KB page).
  const entry = iram.start + 0x4000;
  return buildAppImage({
    chip: o.chip,
    entry,
    segments: [
      { loadAddress: drom.start + 0x20, data: concat([descriptor, payloadHeader, bundle]) },
      { loadAddress: entry, data: new TextEncoder().encode('XS-HOST\0') },
    ],
  });
}

/**
 * The XS bundle of a verified image, given its first segment's data; null for an image that carries
 * none (one built by ESP-IDF or the Moddable SDK: native code, which a virtual board cannot run).
 */
export function xsBundleOf(firstSegment: Uint8Array): string | null {
  const at = APP_DESC_BYTES;
  if (firstSegment.length < at + PAYLOAD_HEADER_BYTES) return null;
  if (!PAYLOAD_MAGIC.every((b, i) => firstSegment[at + i] === b) || u32(firstSegment, at + 4) !== PAYLOAD_FORMAT) return null;
  const length = u32(firstSegment, at + 8);
  const start = at + PAYLOAD_HEADER_BYTES;
  if (start + length > firstSegment.length) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(firstSegment.subarray(start, start + length));
  } catch {
    return null;
  }
}
