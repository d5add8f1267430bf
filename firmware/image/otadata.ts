// The otadata partition (ESP-IDF api-reference/system/ota, "OTA Data Partition"; esp_flash_partitions.h):
// two flash sectors, each starting with an esp_ota_select_entry_t (32 bytes):
//   ota_seq u32 | seq_label[20] | ota_state u32 | crc u32
// crc = esp_rom_crc32_le(UINT32_MAX, &ota_seq, 4). An entry is valid when ota_seq is not 0xFFFFFFFF,
// its crc matches, and (app rollback) its state is neither INVALID nor ABORTED. The valid entry with
// the highest ota_seq selects slot (ota_seq - 1) % number_of_ota_slots
// (bootloader_common_get_active_otadata, bootloader_utility_get_selected_boot_partition).
import { putU32, u32 } from './bytes.ts';

export const OTADATA_SECTOR_BYTES = 0x1000;
export const OTA_SELECT_ENTRY_BYTES = 32;

/** esp_ota_img_states_t. */
export const OTA_IMG_STATE = {
  new: 0x0,
  pending_verify: 0x1,
  valid: 0x2,
  invalid: 0x3,
  aborted: 0x4,
  undefined: 0xffffffff,
} as const;
export type OtaImgStateName = keyof typeof OTA_IMG_STATE;

export interface OtaSelectEntry {
  seq: number;
  /** seq_label[20]: unused by ESP-IDF; kept as read. */
  label: Uint8Array;
  state: number;
  crc: number;
}

export function stateName(state: number): OtaImgStateName | `0x${string}` {
  const found = (Object.keys(OTA_IMG_STATE) as OtaImgStateName[]).find((k) => OTA_IMG_STATE[k] === state >>> 0);
  return found ?? `0x${(state >>> 0).toString(16)}`;
}

/** The ROM's crc32_le(crc, buf, len): the reflected CRC-32 (0xEDB88320) with ~crc in and out. */
export function romCrc32Le(crc: number, data: Uint8Array): number {
  let c = ~crc >>> 0;
  for (const b of data) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

/** bootloader_common_ota_select_crc. */
export function otaSelectCrc(seq: number): number {
  const b = new Uint8Array(4);
  putU32(b, 0, seq);
  return romCrc32Le(0xffffffff, b);
}

export function decodeOtaSelectEntry(bytes: Uint8Array): OtaSelectEntry {
  return { seq: u32(bytes, 0), label: bytes.slice(4, 24), state: u32(bytes, 24), crc: u32(bytes, 28) };
}

export function encodeOtaSelectEntry(e: { seq: number; state: number; label?: Uint8Array }): Uint8Array {
  const out = new Uint8Array(OTA_SELECT_ENTRY_BYTES).fill(0xff);
  putU32(out, 0, e.seq);
  if (e.label) out.set(e.label.subarray(0, 20), 4);
  putU32(out, 24, e.state);
  putU32(out, 28, otaSelectCrc(e.seq));
  return out;
}

/** bootloader_common_ota_select_invalid's complement, without the state test: the seq and its crc hold. */
export function seqValid(e: OtaSelectEntry): boolean {
  return e.seq !== 0xffffffff && e.crc === otaSelectCrc(e.seq);
}

/** bootloader_common_ota_select_valid (with app rollback enabled). */
export function entryValid(e: OtaSelectEntry): boolean {
  return seqValid(e) && e.state !== OTA_IMG_STATE.invalid && e.state !== OTA_IMG_STATE.aborted;
}

/** bootloader_common_get_active_otadata: the valid entry with the higher seq, or -1. */
export function activeOtadata(two: [OtaSelectEntry, OtaSelectEntry]): 0 | 1 | -1 {
  const [a, b] = [entryValid(two[0]), entryValid(two[1])];
  if (a && b) return two[0].seq >= two[1].seq ? 0 : 1;
  return a ? 0 : b ? 1 : -1;
}

/** The seq esp_ota_set_boot_partition writes to select `slot` after the active seq (esp_rewrite_ota_data). */
export function nextSeqFor(slot: number, slotCount: number, activeSeq: number | null): number {
  if (activeSeq === null) return slot + 1;
  let i = 0;
  while (activeSeq > ((slot + 1) % slotCount) + i * slotCount) i++;
  return ((slot + 1) % slotCount) + i * slotCount;
}
