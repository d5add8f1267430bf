// The ROM's part of a flash boot on a virtual ESP32: its banner, then the second-stage bootloader
// image at the chip's bootloader offset (0x0 on the ESP32-S3). Like the ROM, it checks the image
// header and checksum and lists the segments it loads; an erased or foreign first sector stops the
// boot with "invalid header". The bootloader itself is not executed: its place is taken by
// boot-stage.ts, which also prints its identification lines. With SECURE_BOOT_EN burned, the ROM
// first verifies the bootloader's Secure Boot v2 signature against the key digests in eFuse
// (boot-signatures.ts) and stops when it does not verify.
import { verifyAppImage } from '../image/app-image.ts';
import { cString, hex32, u32 } from '../image/bytes.ts';
import type { ChipSpec } from '../image/chips.ts';
import { PARTITION_TYPES, type PartitionEntry } from '../image/partition-table.ts';
import type { BootLog, ResetReason } from './boot-log.ts';
import { romVerifyBootloader } from './boot-signatures.ts';
import type { Efuses } from './efuse.ts';
import type { FlashImage } from './flash-image.ts';

/** The board does not start: the console has said why, as a chip would before resetting again. */
export class BootFailure extends Error {
  override name = 'BootFailure';
}

/** esp_bootloader_desc_t's magic byte (ESP-IDF v5.2+), at the start of the bootloader's first DRAM segment. */
export const BOOTLOADER_DESC_MAGIC = 0x50;

/** The chip revision the bootloader prints: the eFuse model's (efuse.ts), v0.2 when none is given. */
export interface RomBootOptions {
  chip: ChipSpec;
  reset: ResetReason;
  revision?: { major: number; minor: number };
  /** The chip's eFuses: with SECURE_BOOT_EN burned, the ROM and the bootloader boot only signed images. */
  efuses?: Efuses;
  /**
   * The bootloader was built with CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK: an app whose secure_version is
   * below the eFuse SECURE_VERSION is never booted, and booting a confirmed one raises it.
   */
  antiRollback?: boolean;
}

export function romFirstStage(flash: FlashImage, log: BootLog, o: RomBootOptions): void {
  log.romBanner(o.reset, 'flash');
  const at = o.chip.bootloaderOffset;
  const read = (offset: number, length: number) => flash.read(at + offset, Math.max(0, Math.min(length, 0x8000 - at - offset)));
  const check = verifyAppImage(read, { address: at });
  if (!check.header) {
    log.raw(`invalid header: ${hex32(u32(flash.read(at, 4), 0))}`);
    throw new BootFailure(`no second-stage bootloader at ${hex32(at, 0)}`);
  }
  log.raw('SPIWP:0xee');
  log.raw('mode:DIO, clock div:1');
  if (o.efuses?.secureBootEnabled) {
    const why = romVerifyBootloader(read, check.length, o.efuses, log);
    if (why !== undefined) throw new BootFailure(`secure boot: the second-stage bootloader at ${hex32(at, 0)} is refused: ${why}`);
  }
  for (const s of check.segments) log.raw(`load:${hex32(s.loadAddress)},len:${hex32(s.length, 0)}`);
  if (check.checksum && check.checksum.stored !== check.checksum.calculated) {
    log.raw(`checksum failure: calculated ${hex32(check.checksum.calculated, 2)}, stored ${hex32(check.checksum.stored, 2)}`);
    throw new BootFailure('the second-stage bootloader is corrupt');
  }
  log.raw(`entry ${hex32(check.header.entry)}`);
  const first = check.segments[0];
  const desc = first ? read(first.dataOffset, first.length) : new Uint8Array(0);
  const idf = desc[0] === BOOTLOADER_DESC_MAGIC ? cString(desc, 8, 32) : 'unknown';
  const built = desc[0] === BOOTLOADER_DESC_MAGIC ? cString(desc, 40, 24) : 'unknown';
  log.info('boot', `ESP-IDF ${idf} 2nd stage bootloader`);
  log.info('boot', `compile time ${built}`);
  log.info('boot', 'Multicore bootloader');
  log.info('boot', `chip revision: v${o.revision?.major ?? 0}.${o.revision?.minor ?? 2}`);
  log.info('boot.esp32s3', 'Boot SPI Speed : 80MHz');
  log.info('boot.esp32s3', 'SPI Mode       : DIO');
  log.info('boot.esp32s3', `SPI Flash Size : ${flash.size / 0x100000}MB`);
  log.info('boot', 'Enabling RNG early entropy source...');
}

/** The "Usage" column of the bootloader's partition table listing. */
export function partitionUsage(p: PartitionEntry): string {
  if (p.type === PARTITION_TYPES.app) {
    if (p.subtype === 0x00) return 'factory app';
    if (p.subtype === 0x20) return 'test app';
    return p.subtype >= 0x10 && p.subtype <= 0x1f ? 'OTA app' : 'Unknown app';
  }
  if (p.type === PARTITION_TYPES.data) {
    return ({ 0x00: 'OTA data', 0x01: 'RF data', 0x02: 'WiFi data', 0x04: 'NVS keys', 0x05: 'efuse' } as Record<number, string>)[p.subtype] ?? 'Unknown data';
  }
  return 'unknown';
}
