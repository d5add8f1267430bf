// What runs between reset and the firmware on a virtual ESP32: the ROM's first stage (banner, the
// second-stage bootloader image at the chip's bootloader offset) and ESP-IDF's second-stage
// bootloader with app rollback enabled (bootloader_support/src/bootloader_utility.c):
//   - read and verify the partition table at 0x8000 and log it;
//   - read otadata; an entry still PENDING_VERIFY at reset is marked ABORTED (the new image never
//     confirmed itself: rollback); the valid entry with the highest seq selects the slot, and a NEW
//     entry becomes PENDING_VERIFY; with otadata blank, ota_0 is tried;
//   - verify the chosen image (esp_image_format.c: magic, chip id, segments, checksum, SHA-256) and
//     fall back to the slots below it, then above it, logging why each one is not bootable.
// Instead of jumping to native code, the board gets the firmware of the image it chose: the SDK's host
// build (an mc.so) that the image carries (firmware/image/virtual-payload.ts).
import type { AppDescriptor } from '../image/app-desc.ts';
import { verifyAppImage } from '../image/app-image.ts';
import { hex32 } from '../image/bytes.ts';
import type { ChipSpec } from '../image/chips.ts';
import { activeOtadata, OTA_IMG_STATE, seqValid } from '../image/otadata.ts';
import { findPartition, otaSlots, parsePartitionTable, PARTITION_TABLE_MAX_BYTES, PARTITION_TABLE_OFFSET, PARTITION_TYPES, type PartitionEntry } from '../image/partition-table.ts';
import { virtualFirmwareOf } from '../image/virtual-payload.ts';
import type { BootLog } from './boot-log.ts';
import type { FlashImage } from './flash-image.ts';
import { OtadataStore } from './otadata-store.ts';
import { BootFailure, partitionUsage, romFirstStage, type RomBootOptions } from './rom-boot.ts';

export { BootFailure } from './rom-boot.ts';

export interface BootedApp {
  /** Index among the OTA slots (ota_0 is 0). */
  slot: number;
  partition: PartitionEntry;
  table: PartitionEntry[];
  descriptor: AppDescriptor;
  /** The firmware the image carries, inflated. */
  firmware: Uint8Array;
}

export function runBootloader(flash: FlashImage, log: BootLog, o: RomBootOptions): BootedApp {
  romFirstStage(flash, log, o);
  let table: PartitionEntry[];
  try {
    table = parsePartitionTable(flash.read(PARTITION_TABLE_OFFSET, PARTITION_TABLE_MAX_BYTES)).entries;
  } catch (err) {
    log.error('flash_parts', (err as Error).message);
    log.error('boot', 'Failed to verify partition table');
    throw new BootFailure('the partition table is invalid');
  }
  log.info('boot', 'Partition Table:');
  log.info('boot', '## Label            Usage          Type ST Offset   Length');
  table.forEach((p, i) => {
    const row = `${String(i).padStart(2)} ${p.name.padEnd(16)} ${partitionUsage(p).padEnd(16)} ${hex32(p.type, 2).slice(2)} ${hex32(p.subtype, 2).slice(2)} ${hex32(p.offset).slice(2)} ${hex32(p.size).slice(2)}`;
    log.info('boot', row);
  });
  log.info('boot', 'End of partition table');
  const slots = otaSlots(table);
  const otadataPart = findPartition(table, PARTITION_TYPES.data, 0x00);
  const start = selectSlot(flash, log, slots, otadataPart);

  // bootloader_utility_load_boot_image: the chosen slot, then downwards, then upwards.
  const order = [...Array.from({ length: start.index + 1 }, (_, i) => start.index - i), ...Array.from({ length: Math.max(0, slots.length - start.index - 1) }, (_, i) => start.index + 1 + i)];
  for (const index of order) {
    const partition = slots[index]!;
    const loaded = loadApp(flash, log, o.chip, partition);
    if (!loaded) {
      log.error('boot', `OTA app partition slot ${index} is not bootable`);
      continue;
    }
    if (start.initialContents && otadataPart) {
      // set_actual_ota_seq: otadata was blank, so the slot that booted is written down as valid.
      new OtadataStore(flash, otadataPart).write(0, { seq: index + 1, state: OTA_IMG_STATE.valid });
      log.info('boot', `Set actual ota_seq=${index + 1} in otadata[0]`);
    }
    log.info('boot', `Loaded app from partition at offset ${hex32(partition.offset, 0)}`);
    log.info('boot', 'Disabling RNG early entropy source...');
    return { slot: index, partition, table, ...loaded };
  }
  log.error('boot', 'No bootable app partitions in the partition table');
  throw new BootFailure('no bootable app partition');
}

/** bootloader_utility_get_selected_boot_partition, with CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE. */
function selectSlot(flash: FlashImage, log: BootLog, slots: PartitionEntry[], otadataPart: PartitionEntry | undefined): { index: number; initialContents: boolean } {
  if (!otadataPart || slots.length === 0) {
    log.info('boot', 'No factory image, trying OTA 0');
    return { index: 0, initialContents: false };
  }
  const store = new OtadataStore(flash, otadataPart);
  const two = store.read();
  for (const i of [0, 1] as const) {
    if (seqValid(two[i]) && two[i].state === OTA_IMG_STATE.pending_verify) {
      // The image booted last time never marked itself valid: app rollback.
      log.warn('boot', `otadata[${i}] (ota_seq ${two[i].seq}, slot ${(two[i].seq - 1) % slots.length}) is still PENDING_VERIFY: marking it ABORTED (app rollback)`);
      two[i].state = OTA_IMG_STATE.aborted;
      store.write(i, two[i]);
    }
  }
  if (!seqValid(two[0]) && !seqValid(two[1])) {
    log.info('boot', 'No factory image, trying OTA 0');
    return { index: 0, initialContents: true };
  }
  const active = activeOtadata(two);
  if (active === -1) {
    log.error('boot', 'ota data partition invalid and no factory, will try all partitions');
    return { index: -1, initialContents: false };
  }
  const entry = two[active];
  const index = (entry.seq - 1) % slots.length;
  if (entry.state === OTA_IMG_STATE.new) {
    entry.state = OTA_IMG_STATE.pending_verify;
    store.write(active, entry);
    log.info('boot', `otadata[${active}]: ota_seq ${entry.seq} selects slot ${index}, a new image: now PENDING_VERIFY until the app marks it valid`);
  }
  return { index, initialContents: false };
}

/** esp_image_load for one slot: logs the segments and, on failure, ESP-IDF's reason. */
function loadApp(flash: FlashImage, log: BootLog, chip: ChipSpec, partition: PartitionEntry): { descriptor: AppDescriptor; firmware: Uint8Array } | null {
  const read = (offset: number, length: number) => flash.read(partition.offset + offset, Math.max(0, Math.min(length, partition.size - offset)));
  const check = verifyAppImage(read, { expectedChipId: chip.imageChipId, address: partition.offset, partitionSize: partition.size });
  for (const s of check.segments) {
    const how = s.loadAddress === 0 ? '' : s.mapped ? 'map' : 'load';
    log.info('esp_image', `segment ${s.index}: paddr=${hex32(partition.offset + s.dataOffset).slice(2)} vaddr=${hex32(s.loadAddress).slice(2)} size=${s.length.toString(16).padStart(5, '0')}h (${String(s.length).padStart(6)}) ${how}`);
  }
  for (const p of check.problems) log.error(p.tag, p.message);
  if (!check.ok) return null;
  const first = check.segments[0]!;
  const firmware = virtualFirmwareOf(read(first.dataOffset, first.length));
  if (!check.appDescriptor || firmware === null) {
    // A valid native image (ESP-IDF, Moddable SDK for the chip): a real chip would run it; this one cannot.
    log.error('boot', `image at ${hex32(partition.offset, 0)} carries no virtual board firmware: native code cannot run on a virtual board`);
    return null;
  }
  return { descriptor: check.appDescriptor, firmware };
}
