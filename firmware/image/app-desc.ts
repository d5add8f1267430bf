// esp_app_desc_t (ESP-IDF components/esp_app_format/include/esp_app_desc.h), 256 bytes at the very
// start of an app image's first data (DROM) segment: the bootloader and esp_ota_get_partition_description
// read the version from here, and so does our firmware (DESIGN.md section 7: the version is the
// running image's descriptor, never a setting). No dependencies: the portable OTA client uses it.
//
//   0 magic_word u32 = 0xABCD5432     4 secure_version u32     8 reserv1[2] u32
//  16 version[32]    48 project_name[32]    80 time[16]    96 date[16]    112 idf_ver[32]
// 144 app_elf_sha256[32]    176 min_efuse_blk_rev_full u16    178 max_efuse_blk_rev_full u16
// 180 mmu_page_size u8 (log2)    181 reserv3[3]    184 reserv2[18] u32
import { cString, hex, putCString, putU16, putU32, u16, u32 } from './bytes.ts';

export const APP_DESC_MAGIC = 0xabcd5432;
export const APP_DESC_BYTES = 256;

export interface AppDescriptor {
  secureVersion: number;
  version: string;
  projectName: string;
  time: string;
  date: string;
  idfVersion: string;
  /** SHA-256 of the ELF the image came from (for a virtual board's image: of its XS bundle). */
  elfSha256: string;
  minEfuseBlockRevision: number;
  maxEfuseBlockRevision: number;
  /** log2 of the MMU page size the app was linked for (16: 64 KB); 0 from ESP-IDF before v5.1. */
  mmuPageSizeLog2: number;
}

export function encodeAppDescriptor(d: AppDescriptor): Uint8Array {
  const out = new Uint8Array(APP_DESC_BYTES);
  putU32(out, 0, APP_DESC_MAGIC);
  putU32(out, 4, d.secureVersion);
  putCString(out, 16, 32, d.version, 'version');
  putCString(out, 48, 32, d.projectName, 'project name');
  putCString(out, 80, 16, d.time, 'time');
  putCString(out, 96, 16, d.date, 'date');
  putCString(out, 112, 32, d.idfVersion, 'ESP-IDF version');
  if (!/^[0-9a-f]{64}$/.test(d.elfSha256)) throw new RangeError('elfSha256 must be 64 lower-case hex digits');
  for (let i = 0; i < 32; i++) out[144 + i] = parseInt(d.elfSha256.slice(i * 2, i * 2 + 2), 16);
  putU16(out, 176, d.minEfuseBlockRevision);
  putU16(out, 178, d.maxEfuseBlockRevision);
  out[180] = d.mmuPageSizeLog2;
  return out;
}

/** The descriptor at `bytes[at…]`, or null when the magic word is not there. */
export function decodeAppDescriptor(bytes: Uint8Array, at = 0): AppDescriptor | null {
  if (bytes.length < at + APP_DESC_BYTES || u32(bytes, at) !== APP_DESC_MAGIC) return null;
  return {
    secureVersion: u32(bytes, at + 4),
    version: cString(bytes, at + 16, 32),
    projectName: cString(bytes, at + 48, 32),
    time: cString(bytes, at + 80, 16),
    date: cString(bytes, at + 96, 16),
    idfVersion: cString(bytes, at + 112, 32),
    elfSha256: hex(bytes.subarray(at + 144, at + 176)),
    minEfuseBlockRevision: u16(bytes, at + 176),
    maxEfuseBlockRevision: u16(bytes, at + 178),
    mmuPageSizeLog2: bytes[at + 180]!,
  };
}

/**
 * Where the descriptor sits in an app image file: after the 24-byte image header and the first
 * segment's 8-byte header (so at file offset 0x20, mapped at the DROM segment's load address).
 */
export const APP_DESC_IMAGE_OFFSET = 24 + 8;

/** The descriptor of an app image (its first 288 bytes are enough), without checking anything else. */
export function appDescriptorOfImage(image: Uint8Array): AppDescriptor | null {
  if (image[0] !== 0xe9 || image[1] === 0) return null;
  return decodeAppDescriptor(image, APP_DESC_IMAGE_OFFSET);
}
