// What the factory (or `idf.py flash` on a new board) puts on a virtual board's blank flash: the
// second-stage bootloader at the chip's bootloader offset, the partition table at 0x8000, and the
// firmware in the first OTA slot; otadata stays erased, so the first boot tries ota_0 and records
// it (bootloader_utility.c set_actual_ota_seq), as on a board fresh from the factory. For a chip with
// secure boot on, both images are signed (docs/secure-boot.md).
import type { KeyObject } from 'node:crypto';
import { buildAppImage } from '../image/app-image.ts';
import { putCString, putU32 } from '../image/bytes.ts';
import type { ChipSpec } from '../image/chips.ts';
import { compilePartitionTable, otaSlots, PARTITION_TABLE_OFFSET, type PartitionEntry } from '../image/partition-table.ts';
import { signImage } from '../image/secure-boot.ts';
import { VIRTUAL_IDF_VERSION } from '../image/virtual-payload.ts';
import type { FlashImage } from './flash-image.ts';
import { BOOTLOADER_DESC_MAGIC } from './rom-boot.ts';

/**
 * The bootloader image a virtual board carries: a valid ESP-IDF image (the ROM checks it) whose
 * first DRAM segment starts with an esp_bootloader_desc_t. Its code is never run; boot-stage.ts
 * does its work.
 */
export function virtualBootloaderImage(chip: ChipSpec): Uint8Array {
  const dram = chip.memory.find((r) => r.name === 'DRAM')!;
  const iram = chip.memory.find((r) => r.name === 'IRAM') ?? dram;
  // esp_bootloader_desc_t: magic_byte, reserved[2], secure_version, version u32, idf_ver[32], date_time[24], reserved2[16].
  const desc = new Uint8Array(80);
  desc[0] = BOOTLOADER_DESC_MAGIC;
  putU32(desc, 4, 1);
  putCString(desc, 8, 32, VIRTUAL_IDF_VERSION, 'idf_ver');
  putCString(desc, 40, 24, 'Mar  1 2026 00:00:00', 'date_time');
  const entry = iram.end - 0x16900;
  return buildAppImage({ chip, entry, segments: [{ loadAddress: dram.end - 0x1c800, data: desc }, { loadAddress: entry, data: new Uint8Array(4) }] });
}

/**
 * `signingKey`: a factory for a chip with secure boot on signs the bootloader and the app with it
 * (Secure Boot v2, `espsecure sign-data -v 2`), each followed by its signature sector.
 */
export function flashFactoryImages(flash: FlashImage, o: { chip: ChipSpec; table: PartitionEntry[]; app: Uint8Array; signingKey?: KeyObject }): void {
  const slot = otaSlots(o.table)[0];
  if (!slot) throw new Error('the partition table has no OTA app slot for the factory image');
  const sign = (image: Uint8Array) => (o.signingKey ? signImage(image, [o.signingKey]) : image);
  const app = sign(o.app);
  const bootloader = sign(virtualBootloaderImage(o.chip));
  if (app.length > slot.size) throw new Error(`the factory image (${app.length} bytes) does not fit ${slot.name} (${slot.size} bytes)`);
  if (o.chip.bootloaderOffset + bootloader.length > PARTITION_TABLE_OFFSET) throw new Error(`the bootloader (${bootloader.length} bytes) does not fit before the partition table`);
  flash.program(o.chip.bootloaderOffset, bootloader);
  flash.program(PARTITION_TABLE_OFFSET, compilePartitionTable(o.table, flash.size));
  flash.program(slot.offset, app);
}
