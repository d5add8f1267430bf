// What runs between reset and the firmware on a virtual ESP32: the ROM's first stage (banner, the
// second-stage bootloader image at the chip's bootloader offset) and ESP-IDF's second-stage
// bootloader with app rollback enabled (bootloader_support/src/bootloader_utility.c):
//   - read and verify the partition table at 0x8000 and log it;
//   - read otadata; an entry still PENDING_VERIFY at reset is marked ABORTED (the new image never
//     confirmed itself: rollback); the valid entry with the highest seq selects the slot, and a NEW
//     entry becomes PENDING_VERIFY; with otadata blank, ota_0 is tried;
//   - verify the chosen image (esp_image_format.c: magic, chip id, segments, checksum, SHA-256) and
//     fall back to the slots below it, then above it, logging why each one is not bootable;
//   - with SECURE_BOOT_EN burned (CONFIG_SECURE_BOOT_V2_ENABLED): an image is bootable only when its
//     Secure Boot v2 signature verifies with a key whose digest is burned and not revoked
//     (boot-signatures.ts);
//   - built with CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK (RomBootOptions.antiRollback): otadata entries
//     and slots whose app's secure_version is below the eFuse SECURE_VERSION are passed over, and
//     booting an app that is not PENDING_VERIFY (confirmed, or otadata initial) raises SECURE_VERSION
//     to its secure_version. (ESP-IDF burns at selection, before loading; here once the slot has
//     verified, so an image that does not verify never raises the counter.)
// Instead of jumping to native code, the board gets the firmware of the image it chose: the SDK's host
// build (an mc.so) that the image carries (firmware/image/virtual-payload.ts).
import { appDescriptorOfImage, APP_DESC_BYTES, APP_DESC_IMAGE_OFFSET, type AppDescriptor } from '../image/app-desc.ts';
import { verifyAppImage } from '../image/app-image.ts';
import { hex32 } from '../image/bytes.ts';
import type { ChipSpec } from '../image/chips.ts';
import { activeOtadata, entryValid, OTA_IMG_STATE, seqValid } from '../image/otadata.ts';
import { findPartition, otaSlots, parsePartitionTable, PARTITION_TABLE_MAX_BYTES, PARTITION_TABLE_OFFSET, PARTITION_TYPES, type PartitionEntry } from '../image/partition-table.ts';
import { virtualFirmwareOf } from '../image/virtual-payload.ts';
import type { BootLog } from './boot-log.ts';
import { logSecureBootEnabled, updateSecureVersion, verifyAppSignature } from './boot-signatures.ts';
import type { Efuses } from './efuse.ts';
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
  const rollback = o.antiRollback && o.efuses ? o.efuses : undefined;
  const start = selectSlot(flash, log, slots, otadataPart, rollback);

  // bootloader_utility_load_boot_image: the chosen slot, then downwards, then upwards.
  const order = [...Array.from({ length: start.index + 1 }, (_, i) => start.index - i), ...Array.from({ length: Math.max(0, slots.length - start.index - 1) }, (_, i) => start.index + 1 + i)];
  const refused: string[] = [];
  for (const index of order) {
    const partition = slots[index]!;
    const belowCounter = rollback ? antiRollbackRefusal(flash, partition, rollback) : undefined;
    if (belowCounter) log.error('boot', `OTA app partition slot ${index}: ${belowCounter}`);
    const loaded = belowCounter ? { refused: belowCounter } : loadApp(flash, log, o.chip, partition, o.efuses);
    if ('refused' in loaded) {
      log.error('boot', `OTA app partition slot ${index} is not bootable`);
      refused.push(`${partition.name}: ${loaded.refused}`);
      continue;
    }
    if (start.initialContents && otadataPart) {
      // set_actual_ota_seq: otadata was blank, so the slot that booted is written down as valid.
      new OtadataStore(flash, otadataPart).write(0, { seq: index + 1, state: OTA_IMG_STATE.valid });
      log.info('boot', `Set actual ota_seq=${index + 1} in otadata[0]`);
    }
    // update_anti_rollback: an app booted confirmed (or from initial otadata) raises SECURE_VERSION.
    if (rollback && ((start.initialContents && otadataPart) || (index === start.index && start.confirmed))) updateSecureVersion(rollback, loaded.descriptor.secureVersion, log);
    log.info('boot', `Loaded app from partition at offset ${hex32(partition.offset, 0)}`);
    if (o.efuses?.secureBootEnabled) logSecureBootEnabled(log);
    log.info('boot', 'Disabling RNG early entropy source...');
    return { slot: index, partition, table, ...loaded };
  }
  log.error('boot', 'No bootable app partitions in the partition table');
  throw new BootFailure(`no bootable app partition${refused.length ? ` (${refused.join('; ')})` : ''}`);
}

/** Why anti-rollback passes a slot over (check_anti_rollback), or undefined when its app may boot. */
function antiRollbackRefusal(flash: FlashImage, partition: PartitionEntry, efuses: Efuses): string | undefined {
  const desc = appDescriptorOfImage(flash.read(partition.offset, APP_DESC_IMAGE_OFFSET + APP_DESC_BYTES));
  if (!desc) return 'no app descriptor to read a secure_version from (anti-rollback)';
  if (desc.secureVersion >= efuses.secureVersion) return undefined;
  return `app ${desc.version} has secure_version ${desc.secureVersion}, below the eFuse SECURE_VERSION ${efuses.secureVersion}: anti-rollback never boots it`;
}

/**
 * bootloader_utility_get_selected_boot_partition, with CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE (and,
 * given `rollback`, CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK). `confirmed`: the selected entry was VALID.
 */
function selectSlot(flash: FlashImage, log: BootLog, slots: PartitionEntry[], otadataPart: PartitionEntry | undefined, rollback: Efuses | undefined): { index: number; initialContents: boolean; confirmed: boolean } {
  if (!otadataPart || slots.length === 0) {
    log.info('boot', 'No factory image, trying OTA 0');
    return { index: 0, initialContents: false, confirmed: false };
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
  if (rollback) {
    log.info('boot', 'Enabled a check secure version of app for anti rollback');
    log.info('boot', `Secure version (from eFuse) = ${rollback.secureVersion}`);
  }
  if (!seqValid(two[0]) && !seqValid(two[1])) {
    log.info('boot', rollback ? 'otadata[0..1] in initial state' : 'No factory image, trying OTA 0');
    return { index: 0, initialContents: true, confirmed: false };
  }
  // get_active_otadata_with_check_anti_rollback: an entry whose slot's app is below the counter is not selected.
  const candidates = two.map((e, i) => {
    const below = rollback && entryValid(e) ? antiRollbackRefusal(flash, slots[(e.seq - 1) % slots.length]!, rollback) : undefined;
    if (!below) return e;
    log.warn('boot', `otadata[${i}] (ota_seq ${e.seq}) is not selected: OTA slot ${(e.seq - 1) % slots.length}: ${below}`);
    return { ...e, state: OTA_IMG_STATE.invalid };
  }) as typeof two;
  const active = activeOtadata(candidates);
  if (active === -1) {
    log.error('boot', 'ota data partition invalid and no factory, will try all partitions');
    return { index: -1, initialContents: false, confirmed: false };
  }
  const entry = two[active];
  const index = (entry.seq - 1) % slots.length;
  if (entry.state === OTA_IMG_STATE.new) {
    entry.state = OTA_IMG_STATE.pending_verify;
    store.write(active, entry);
    log.info('boot', `otadata[${active}]: ota_seq ${entry.seq} selects slot ${index}, a new image: now PENDING_VERIFY until the app marks it valid`);
  }
  return { index, initialContents: false, confirmed: entry.state === OTA_IMG_STATE.valid };
}

/** esp_image_load for one slot: logs the segments and, on failure, ESP-IDF's reason (and returns it). */
function loadApp(flash: FlashImage, log: BootLog, chip: ChipSpec, partition: PartitionEntry, efuses: Efuses | undefined): { descriptor: AppDescriptor; firmware: Uint8Array } | { refused: string } {
  const read = (offset: number, length: number) => flash.read(partition.offset + offset, Math.max(0, Math.min(length, partition.size - offset)));
  const check = verifyAppImage(read, { expectedChipId: chip.imageChipId, address: partition.offset, partitionSize: partition.size });
  for (const s of check.segments) {
    const how = s.loadAddress === 0 ? '' : s.mapped ? 'map' : 'load';
    log.info('esp_image', `segment ${s.index}: paddr=${hex32(partition.offset + s.dataOffset).slice(2)} vaddr=${hex32(s.loadAddress).slice(2)} size=${s.length.toString(16).padStart(5, '0')}h (${String(s.length).padStart(6)}) ${how}`);
  }
  for (const p of check.problems) log.error(p.tag, p.message);
  if (!check.ok) return { refused: check.problems.map((p) => p.message).join('; ') || 'not a valid app image' };
  if (efuses?.secureBootEnabled) {
    const why = verifyAppSignature(read, check.length, efuses, log, partition.offset);
    if (why !== undefined) return { refused: `secure boot: ${why}` };
  }
  const first = check.segments[0]!;
  const firmware = virtualFirmwareOf(read(first.dataOffset, first.length));
  if (!check.appDescriptor || firmware === null) {
    // A valid native image (ESP-IDF, Moddable SDK for the chip): a real chip would run it; this one cannot.
    const why = `image at ${hex32(partition.offset, 0)} carries no virtual board firmware: native code cannot run on a virtual board`;
    log.error('boot', why);
    return { refused: why };
  }
  return { descriptor: check.appDescriptor, firmware };
}

/** What ESP-IDF's app_init prints about the image (esp_app_desc_t) before the app runs. */
export function appInitLines(app: BootedApp, log: BootLog): void {
  const d = app.descriptor;
  log.info('app_init', 'Application information:');
  log.info('app_init', `Project name:     ${d.projectName}`);
  log.info('app_init', `App version:      ${d.version}`);
  log.info('app_init', `Compile time:     ${d.date} ${d.time}`);
  log.info('app_init', `ELF file SHA256:  ${d.elfSha256.slice(0, 16)}...`);
  log.info('app_init', `ESP-IDF:          ${d.idfVersion}`);
}
