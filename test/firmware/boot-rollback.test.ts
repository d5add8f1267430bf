// A virtual ESP32-S3 boots as ESP-IDF boots: the ROM and the bootloader read the partition table and
// otadata, verify the chosen image and fall back when it is invalid; a new image runs in
// PENDING_VERIFY until the firmware marks it valid, and a crash before that rolls it back. The
// images are written into the passive slot with the virtual chip's esp_ota_ops (ota-slots.ts) while
// the board is off, so each case sets up exactly one flash state; the OTA client's own path is in
// sdk-board.test.ts and in the bench's OTA scenarios. The boards (SdkBoard) run the firmware the
// Moddable SDK builds for the host, one build for the whole file (the identity's).
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FLASH_BYTES, firmwareImage, UNLOADABLE_FIRMWARE, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import { FlashImage } from '../../firmware/virtual-esp32/flash-image.ts';
import { OtaSlots } from '../../firmware/virtual-esp32/ota-slots.ts';
import { BootFailure, SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { BootLog } from '../../firmware/virtual-esp32/boot-log.ts';
import { runBootloader } from '../../firmware/virtual-esp32/boot-stage.ts';
import { buildAppImage } from '../../firmware/image/app-image.ts';
import { CHIPS } from '../../firmware/image/chips.ts';
import { buildVirtualAppImage } from '../../firmware/image/virtual-payload.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';

const S3 = CHIPS.esp32s3;
let dir: string;
let n = 0;
const identity = (): DeviceIdentity => ({ uuid: `boot-${++n}`, role: 'controller', ethernetMac: `24:0A:C4:E7:00:${n.toString(16).padStart(2, '0')}`, wifiMac: `24:0A:C4:17:00:${n.toString(16).padStart(2, '0')}`, hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' });

/** An app image of the boards' own build (their identity's variant) at `version`. */
const imageOf = (version: string) => firmwareImage(version, { variant: variantOf({ role: 'controller', hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', build: 'production', ethernetMac: '24:0A:C4:E7:00:00' }) });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'boot-rollback-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A board on its own flash; `run` gets it started and closes it after. */
function boardOn(name: string) {
  const id = identity();
  const flashDir = join(dir, name);
  const start = (reset?: 'poweron' | 'software', onConsoleLine?: (line: string) => void) =>
    startSdkBoard({ identity: id, fuseKeyHex: '77'.repeat(32), flashDir, adminPassword: 'bench-admin-password', ...(reset ? { reset } : {}), ...(onConsoleLine ? { onConsoleLine } : {}) });
  /** The virtual chip's esp_ota_ops on the board's flash while it is off, as if the firmware ran them. */
  const installWhileOff = (image: Uint8Array, o: { running?: 'ota_0' | 'ota_1' } = {}) => {
    const flash = FlashImage.open(`${flashDir}.bin`, DEFAULT_FLASH_BYTES);
    try {
      const table = productPartitions();
      const slots = new OtaSlots(flash, table, S3, table.find((p) => p.name === (o.running ?? 'ota_0'))!);
      const update = slots.begin(image.length);
      update.write(image);
      update.finish();
    } finally {
      flash.close();
    }
  };
  const flashAt = (offset: number, bytes: Uint8Array) => {
    const flash = FlashImage.open(`${flashDir}.bin`, DEFAULT_FLASH_BYTES);
    flash.erase(offset - (offset % 0x1000), Math.ceil((bytes.length + (offset % 0x1000)) / 0x1000) * 0x1000);
    flash.program(offset, bytes);
    flash.close();
  };
  return { start, installWhileOff, flashAt, flashDir };
}

async function status(b: SdkBoard): Promise<Record<string, any>> {
  const answer = await b.typeLine('status');
  expect(answer).toMatch(/^OK /);
  return JSON.parse(answer.slice(3));
}

/** The process of the firmware running on `flashDir` (its current directory), if one does. */
function firmwareProcessOn(flashDir: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/cwd`) === flashDir) return Number(name);
    } catch {
      // gone meanwhile, or not ours
    }
  }
  return undefined;
}

/**
 * Stops the firmware of `version` dead as soon as its process exists (SIGSTOP), long before it can
 * mark itself valid: a firmware that hangs at start, as one stuck in a loop would. (The old engine ran
 * a bundle that overflowed its stack; a build of the SDK that crashes on purpose would be a build of
 * its own.)
 */
function hangAtStart(flashDir: string, version: string): { onConsoleLine: (line: string) => void; stopped: () => boolean; done: () => void } {
  let armed = false;
  let stopped = false;
  const poll = setInterval(() => {
    if (!armed || stopped) return;
    const pid = firmwareProcessOn(flashDir);
    if (pid === undefined) return;
    process.kill(pid, 'SIGSTOP');
    stopped = true;
  }, 1);
  const pattern = new RegExp(`app_init: App version: +${version.replace(/\./g, '\\.')}$`);
  return {
    onConsoleLine: (line) => void (pattern.test(line) && (armed = true)),
    stopped: () => stopped,
    done: () => clearInterval(poll),
  };
}

describe('a new virtual board', () => {
  it('is factory-flashed, boots ota_0 from blank otadata and reports the version of its app descriptor', async () => {
    const b = boardOn('fresh');
    const board = await b.start();
    try {
      const lines = board.consoleLines;
      expect(lines.slice(0, 3)).toEqual(['ESP-ROM:esp32s3-20210327', 'Build:Mar 27 2021', 'rst:0x1 (POWERON),boot:0x8 (SPI_FAST_FLASH_BOOT)']);
      const text = lines.join('\n');
      expect(text).toMatch(/^I \(\d+\) boot: ESP-IDF moddable-sdk-lin 2nd stage bootloader$/m);
      expect(text).toMatch(/^I \(\d+\) boot:  3 ota_0            OTA app          00 10 00010000 00300000$/m);
      expect(text).toMatch(/^I \(\d+\) boot: No factory image, trying OTA 0$/m);
      expect(text).toMatch(/^I \(\d+\) esp_image: segment 0: paddr=00010020 vaddr=3c000020 size=[0-9a-f]{5}h \( *\d+\) map$/m);
      expect(text).toMatch(/^I \(\d+\) boot: Set actual ota_seq=1 in otadata\[0\]$/m);
      expect(text).toMatch(/^I \(\d+\) boot: Loaded app from partition at offset 0x10000$/m);
      expect(text).toMatch(/^I \(\d+\) app_init: App version: +2026\.01\.01$/m);
      expect((await status(board)).firmware_version).toBe('2026.01.01');
      expect(board.identity.firmwareVersion).toBe('2026.01.01');
    } finally {
      await board.close();
    }
  });
});

describe('a new image', () => {
  it('boots PENDING_VERIFY, is marked valid by the firmware once up, and stays after the next reset', async () => {
    const b = boardOn('good');
    await (await b.start()).close();
    b.installWhileOff(await imageOf('2026.02.01'));
    const first = await b.start('software');
    try {
      expect(first.consoleLines[2]).toBe('rst:0xc (RTC_SW_CPU_RST),boot:0x8 (SPI_FAST_FLASH_BOOT)');
      expect(first.consoleLines.join('\n')).toMatch(/otadata\[1\]: ota_seq 2 selects slot 1, a new image: now PENDING_VERIFY/);
      expect(first.runningImage?.partition.name).toBe('ota_1');
      expect((await status(first)).firmware_version).toBe('2026.02.01');
      // Marked valid right after the boot's end (start.ts), which start() waited for.
      await expect.poll(() => first.consoleLines).toContain('LOG INFO ota: firmware 2026.02.01 in ota_1 is up: marked valid, rollback cancelled');
    } finally {
      await first.close();
    }
    const second = await b.start('software');
    try {
      expect(second.consoleLines.join('\n')).not.toMatch(/ABORTED|PENDING_VERIFY/);
      expect((await status(second)).firmware_version).toBe('2026.02.01');
    } finally {
      await second.close();
    }
  });

  it('that hangs before marking itself valid is reset by the task watchdog and rolled back to the previous slot', { timeout: 60_000 }, async () => {
    const b = boardOn('hang');
    await (await b.start()).close();
    b.installWhileOff(await imageOf('2026.03.01'));
    const hang = hangAtStart(b.flashDir, '2026.03.01');
    let board: SdkBoard;
    try {
      board = await b.start('software', hang.onConsoleLine);
    } finally {
      hang.done();
    }
    try {
      expect(hang.stopped(), 'the new firmware was stopped at start').toBe(true);
      const text = board.consoleLines.join('\n');
      expect(text).toMatch(/^HOST firmware fault \(task watchdog: no answer for 5 s\): reset$/m);
      expect(text).toMatch(/^rst:0x7 \(TG0WDT_SYS_RST\),boot:0x8 \(SPI_FAST_FLASH_BOOT\)$/m);
      expect(text).toMatch(/^W \(\d+\) boot: otadata\[1\] \(ota_seq 2, slot 1\) is still PENDING_VERIFY: marking it ABORTED \(app rollback\)$/m);
      expect(text).not.toMatch(/firmware 2026\.03\.01 in ota_1 is up/);
      expect(board.runningImage?.partition.name).toBe('ota_0');
      expect((await status(board)).firmware_version).toBe('2026.01.01');
      expect(board.reboots).toEqual(['watchdog: the main loop did not answer']);
    } finally {
      await board.close();
    }
    // What the firmware's esp_ota_get_last_invalid_partition sees now.
    const flash = FlashImage.open(`${b.flashDir}.bin`, DEFAULT_FLASH_BYTES);
    try {
      const table = productPartitions();
      expect(new OtaSlots(flash, table, S3, table.find((p) => p.name === 'ota_0')!).lastInvalidApp()).toEqual({ partition: 'ota_1', version: '2026.03.01', projectName: 'esp32-fleet', state: 'aborted', secureVersion: 0 });
    } finally {
      flash.close();
    }
  });

  it('whose firmware fails at start is reset and rolled back the same way', async () => {
    const b = boardOn('unloadable');
    await (await b.start()).close();
    // An image that verifies but carries no firmware the chip can run (not a shared object): it ends
    // before it has marked itself valid, as a firmware that throws at start does.
    b.installWhileOff(buildVirtualAppImage({ chip: S3, version: '2026.04.01', firmware: UNLOADABLE_FIRMWARE }));
    const board = await b.start('software');
    try {
      const text = board.consoleLines.join('\n');
      // The loader's reason (dlopen's), as the chip's panic output names the fault.
      expect(text).toMatch(/^HOST firmware fault \(the app failed to start: exit 2: loader: .+\.so: .+\): reset$/m);
      expect(text).toMatch(/^rst:0x3 \(RTC_SW_SYS_RST\)/m);
      expect(text).toMatch(/^W \(\d+\) boot: otadata\[1\] \(ota_seq 2, slot 1\) is still PENDING_VERIFY: marking it ABORTED \(app rollback\)$/m);
      expect(board.runningImage?.partition.name).toBe('ota_0');
      expect((await status(board)).firmware_version).toBe('2026.01.01');
      expect(board.reboots).toEqual([expect.stringMatching(/^panic: exit 2: loader: /)]);
    } finally {
      await board.close();
    }
  });
});

describe('an invalid image', () => {
  it('in the selected slot is refused with ESP-IDF\'s reason and the bootloader falls back to the other slot', async () => {
    const b = boardOn('corrupt');
    await (await b.start()).close();
    const image = await imageOf('2026.05.01');
    b.installWhileOff(image);
    // Damage one byte of the installed image's firmware (after esp_ota_end verified it).
    const corrupt = image.slice(0x2000, 0x2001).map((x) => x & (x - 1)); // clear its lowest set bit (NOR programming only clears)
    const flash = FlashImage.open(`${b.flashDir}.bin`, DEFAULT_FLASH_BYTES);
    expect(corrupt[0]).not.toBe(image[0x2000]);
    flash.program(0x310000 + 0x2000, corrupt);
    flash.close();
    const board = await b.start('software');
    try {
      const text = board.consoleLines.join('\n');
      expect(text).toMatch(/^E \(\d+\) esp_image: (Checksum failed\. Calculated 0x[0-9a-f]+ read 0x[0-9a-f]+|Image hash failed - image is corrupt)$/m);
      expect(text).toMatch(/^E \(\d+\) boot: OTA app partition slot 1 is not bootable$/m);
      expect(text).toMatch(/^I \(\d+\) boot: Loaded app from partition at offset 0x10000$/m);
      expect((await status(board)).firmware_version).toBe('2026.01.01');
    } finally {
      await board.close();
    }
  });

  it('for another chip, or native code without a virtual board firmware, is not bootable either', async () => {
    const b = boardOn('foreign');
    await (await b.start()).close();
    b.flashAt(0x10000, buildVirtualAppImage({ chip: CHIPS.esp32c3, version: '2026.01.02', firmware: UNLOADABLE_FIRMWARE }));
    b.flashAt(0x310000, buildAppImage({ chip: S3, entry: 0x40374000, segments: [{ loadAddress: 0x3c000020, data: new Uint8Array(256) }, { loadAddress: 0x40374000, data: new Uint8Array(64) }] }));
    const lines: string[] = [];
    await expect(startSdkBoard({ identity: identity(), fuseKeyHex: '77'.repeat(32), flashDir: b.flashDir, onConsoleLine: (l) => lines.push(l) })).rejects.toBeInstanceOf(BootFailure);
    const text = lines.join('\n');
    expect(text).toMatch(/^E \(\d+\) boot_comm: mismatch chip ID, expected 9, found 5$/m);
    expect(text).toMatch(/^E \(\d+\) boot: OTA app partition slot 0 is not bootable$/m);
    expect(text).toMatch(/^E \(\d+\) boot: image at 0x310000 carries no virtual board firmware: native code cannot run on a virtual board$/m);
    expect(text).toMatch(/^E \(\d+\) boot: No bootable app partitions in the partition table$/m);
  });

  it('an erased flash does not boot at all: the ROM finds no bootloader', async () => {
    const b = boardOn('erased');
    await (await b.start()).close();
    const flash = FlashImage.open(`${b.flashDir}.bin`, DEFAULT_FLASH_BYTES);
    flash.erase(0, DEFAULT_FLASH_BYTES);
    flash.close();
    const lines: string[] = [];
    await expect(startSdkBoard({ identity: identity(), fuseKeyHex: '77'.repeat(32), flashDir: b.flashDir, onConsoleLine: (l) => lines.push(l) })).rejects.toThrow(/no second-stage bootloader/);
    expect(lines).toContain('invalid header: 0xffffffff');
  });
});

describe("the virtual chip's esp_ota_ops", () => {
  it('refuse an update while the running image is unconfirmed, an image larger than the slot, and a download without the image magic', async () => {
    const b = boardOn('ops');
    await (await b.start()).close();
    b.installWhileOff(await imageOf('2026.06.01'));
    const flash = FlashImage.open(`${b.flashDir}.bin`, DEFAULT_FLASH_BYTES);
    try {
      // The bootloader alone: it makes the new image PENDING_VERIFY; no firmware runs to confirm it.
      const app = runBootloader(flash, new BootLog(() => undefined), { chip: S3, reset: 'software' });
      expect(app.partition.name).toBe('ota_1');
      const slots = new OtaSlots(flash, app.table, S3, app.partition);
      expect(slots.runningApp()).toEqual({ partition: 'ota_1', version: '2026.06.01', projectName: 'esp32-fleet', state: 'pending_verify', secureVersion: 0 });
      expect(() => slots.begin(1000)).toThrow('ESP_ERR_OTA_ROLLBACK_INVALID_STATE: Running app has not confirmed state (ESP_OTA_IMG_PENDING_VERIFY)');
      expect(slots.markValid()).toBe(true);
      expect(slots.markValid()).toBe(false);
      expect(slots.runningApp().state).toBe('valid');
      expect(() => slots.begin(0x300001)).toThrow(/^ESP_ERR_INVALID_SIZE/);
      const update = slots.begin(1000);
      expect(() => update.write(new Uint8Array(10).fill(0x00))).toThrow(/^ESP_ERR_OTA_VALIDATE_FAILED: OTA image has invalid magic byte \(expected 0xE9, saw 0x00\)/);
    } finally {
      flash.close();
    }
  });
});
