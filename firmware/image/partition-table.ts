// ESP-IDF's partition table (docs: api-guides/partition-tables; gen_esp32part.py writes it, the
// bootloader's esp_partition_table_verify reads it): at flash offset 0x8000, at most 0xC00 bytes of
// 32-byte entries, then an MD5 entry over all the entries before it, then erased flash (0xFF).
//
// Entry (esp_partition_info_t): magic 0x50AA (bytes AA 50) | type u8 | subtype u8 | offset u32 |
// size u32 | label char[16] | flags u32 (bit 0 encrypted, bit 1 readonly).
// MD5 entry: bytes EB EB | 14 bytes 0xFF | MD5 (16 bytes) of the entries before it.
import { md5 } from '@noble/hashes/legacy.js';
import { cString, equalBytes, hex32, putCString, putU16, putU32, u16, u32 } from './bytes.ts';

export const PARTITION_TABLE_OFFSET = 0x8000;
export const PARTITION_TABLE_MAX_BYTES = 0xc00;
const ENTRY_BYTES = 32;
/** esp_partition_info_t.magic, ESP_PARTITION_MAGIC. */
const ENTRY_MAGIC = 0x50aa;
/** The MD5 entry's magic, ESP_PARTITION_MAGIC_MD5. */
const MD5_MAGIC = 0xebeb;
const LABEL_BYTES = 16;

export const PARTITION_TYPES = { app: 0x00, data: 0x01 } as const;
/** Subtypes by type (esp_partition.h; gen_esp32part.py's SUBTYPES). ota_0..ota_15 are 0x10..0x1F. */
export const PARTITION_SUBTYPES: Record<number, Record<string, number>> = {
  0x00: { factory: 0x00, test: 0x20, ...Object.fromEntries(Array.from({ length: 16 }, (_, n) => [`ota_${n}`, 0x10 + n])) },
  0x01: { ota: 0x00, phy: 0x01, nvs: 0x02, coredump: 0x03, nvs_keys: 0x04, efuse: 0x05, undefined: 0x06, esphttpd: 0x80, fat: 0x81, spiffs: 0x82, littlefs: 0x83 },
};
export const FLAG_ENCRYPTED = 0x1;
export const FLAG_READONLY = 0x2;
/** App partitions start on a 64 KB boundary (the cache MMU's page), data on a 4 KB sector. */
export const ALIGNMENT: Record<number, number> = { 0x00: 0x10000, 0x01: 0x1000 };

export interface PartitionEntry {
  name: string;
  type: number;
  subtype: number;
  offset: number;
  size: number;
  flags: number;
}

export class PartitionTableError extends Error {
  override name = 'PartitionTableError';
}

export function typeName(type: number): string {
  return Object.entries(PARTITION_TYPES).find(([, v]) => v === type)?.[0] ?? hex32(type, 2);
}

export function subtypeName(type: number, subtype: number): string {
  return Object.entries(PARTITION_SUBTYPES[type] ?? {}).find(([, v]) => v === subtype)?.[0] ?? hex32(subtype, 2);
}

/** The OTA app slots in slot order (ota_0, ota_1, …), as the bootloader indexes them. */
export function otaSlots(table: PartitionEntry[]): PartitionEntry[] {
  return table.filter((p) => p.type === PARTITION_TYPES.app && p.subtype >= 0x10 && p.subtype <= 0x1f).sort((a, b) => a.subtype - b.subtype);
}

export function findPartition(table: PartitionEntry[], type: number, subtype: number): PartitionEntry | undefined {
  return table.find((p) => p.type === type && p.subtype === subtype);
}

/** The checks gen_esp32part.py makes before it writes a table; throws naming the partition. */
export function verifyPartitions(table: PartitionEntry[], flashSizeBytes?: number): void {
  if ((table.length + 1) * ENTRY_BYTES > PARTITION_TABLE_MAX_BYTES) throw new PartitionTableError(`${table.length} partitions do not fit in ${PARTITION_TABLE_MAX_BYTES} bytes`);
  const names = new Set<string>();
  const sorted = [...table].sort((a, b) => a.offset - b.offset);
  let end = PARTITION_TABLE_OFFSET + 0x1000;
  for (const p of sorted) {
    if (!/^[\x20-\x7e]{1,15}$/.test(p.name)) throw new PartitionTableError(`partition name ${JSON.stringify(p.name)} must be 1 to 15 printable characters`);
    if (names.has(p.name)) throw new PartitionTableError(`partition name ${p.name} is used twice`);
    names.add(p.name);
    const align = ALIGNMENT[p.type] ?? 0x1000;
    if (p.offset % align !== 0) throw new PartitionTableError(`partition ${p.name} at ${hex32(p.offset)} is not aligned to ${hex32(align)}`);
    if (p.size <= 0 || (p.type === PARTITION_TYPES.app && p.size % 0x1000 !== 0)) throw new PartitionTableError(`partition ${p.name} has a bad size ${hex32(p.size)}`);
    if (p.offset < end) throw new PartitionTableError(`partition ${p.name} at ${hex32(p.offset)} overlaps the partition table or the partition before it (which ends at ${hex32(end)})`);
    end = p.offset + p.size;
    if (flashSizeBytes !== undefined && end > flashSizeBytes) throw new PartitionTableError(`partition ${p.name} ends at ${hex32(end)}, beyond the ${flashSizeBytes / 0x100000} MB flash`);
  }
  const otadata = table.filter((p) => p.type === PARTITION_TYPES.data && p.subtype === PARTITION_SUBTYPES[0x01]!.ota);
  if (otadata.length > 1) throw new PartitionTableError('more than one otadata partition');
  if (otaSlots(table).length > 0 && (otadata.length === 0 || otadata[0]!.size !== 0x2000)) {
    throw new PartitionTableError('OTA app partitions need one otadata partition of 0x2000 bytes (two sectors of esp_ota_select_entry_t)');
  }
}

/** The binary table gen_esp32part.py writes: entries, the MD5 entry, 0xFF to 0xC00 bytes. */
export function compilePartitionTable(table: PartitionEntry[], flashSizeBytes?: number): Uint8Array {
  verifyPartitions(table, flashSizeBytes);
  const out = new Uint8Array(PARTITION_TABLE_MAX_BYTES).fill(0xff);
  table.forEach((p, i) => {
    const at = i * ENTRY_BYTES;
    putU16(out, at, ENTRY_MAGIC);
    out[at + 2] = p.type;
    out[at + 3] = p.subtype;
    putU32(out, at + 4, p.offset);
    putU32(out, at + 8, p.size);
    putCString(out, at + 12, LABEL_BYTES, p.name, `partition name ${p.name}`);
    putU32(out, at + 28, p.flags);
  });
  const md5At = table.length * ENTRY_BYTES;
  putU16(out, md5At, MD5_MAGIC);
  out.set(md5(out.subarray(0, md5At)), md5At + 16);
  return out;
}

/**
 * Reads a binary table as the bootloader does: entries until erased flash; a bad magic, or an MD5
 * entry that does not match, makes the whole table invalid ("Failed to verify partition table").
 */
export function parsePartitionTable(bytes: Uint8Array): { entries: PartitionEntry[]; md5Checked: boolean } {
  const entries: PartitionEntry[] = [];
  for (let at = 0; at + ENTRY_BYTES <= Math.min(bytes.length, PARTITION_TABLE_MAX_BYTES); at += ENTRY_BYTES) {
    const magic = u16(bytes, at);
    if (magic === ENTRY_MAGIC) {
      entries.push({ type: bytes[at + 2]!, subtype: bytes[at + 3]!, offset: u32(bytes, at + 4), size: u32(bytes, at + 8), name: cString(bytes, at + 12, LABEL_BYTES), flags: u32(bytes, at + 28) });
      continue;
    }
    if (magic === MD5_MAGIC) {
      if (!equalBytes(md5(bytes.subarray(0, at)), bytes.subarray(at + 16, at + 32))) throw new PartitionTableError('partition table MD5 mismatch');
      return { entries, md5Checked: true };
    }
    if (magic === 0xffff) return { entries, md5Checked: false };
    throw new PartitionTableError(`partition entry ${entries.length} has bad magic ${hex32(magic, 4)}`);
  }
  // A table file may stop right after its entries (gen_esp32part.py output without --md5); in flash
  // the next 32 bytes would be erased.
  if (bytes.length < PARTITION_TABLE_MAX_BYTES) return { entries, md5Checked: false };
  throw new PartitionTableError('partition table has no end marker within 0xC00 bytes');
}
