// The boot stage of a virtual ESP32-S3 with Secure Boot v2 and anti-rollback (docs/secure-boot.md,
// "The virtual chip"), on its own: a real flash image file programmed as the factory does, the chip's
// eFuse model with key digests burned, the ROM and the bootloader (runBootloader) choosing a slot.
// The images carry a payload that is never run (the bootloader only inflates it), so every flash
// state is quick to set up; the same boot stage under running firmware: secure-boot-board.test.ts.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHIPS } from '../../firmware/image/chips.ts';
import { SIG_BLOCK_BYTES, signImage } from '../../firmware/image/secure-boot.ts';
import { buildVirtualAppImage } from '../../firmware/image/virtual-payload.ts';
import { BootLog } from '../../firmware/virtual-esp32/boot-log.ts';
import { burnSecureBootFuses } from '../../firmware/virtual-esp32/boot-signatures.ts';
import { BootFailure, runBootloader } from '../../firmware/virtual-esp32/boot-stage.ts';
import { Efuses } from '../../firmware/virtual-esp32/efuse.ts';
import { getField } from '../../firmware/chip/esp32s3-efuse.ts';
import { flashFactoryImages } from '../../firmware/virtual-esp32/factory-flash.ts';
import { DEFAULT_FLASH_BYTES, UNLOADABLE_FIRMWARE } from '../../firmware/sdk-host/firmware-image.ts';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import { FlashImage } from '../../firmware/virtual-esp32/flash-image.ts';
import { OtaSlots } from '../../firmware/virtual-esp32/ota-slots.ts';
import { installBySerial } from '../helpers/serial-install.ts';

const S3 = CHIPS.esp32s3;
const OTA_1 = 0x310000;
let dir: string;
let n = 0;
/** A, B: burned in SECURE_BOOT_DIGEST0, 1; C: a key the chip does not know. */
let A: KeyObject, B: KeyObject, C: KeyObject;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'secure-boot-stage-'));
  [A, B, C] = [0, 1, 2].map(() => generateKeyPairSync('rsa', { modulusLength: 3072 }).privateKey) as [KeyObject, KeyObject, KeyObject];
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const app = (version: string, secureVersion = 0) => buildVirtualAppImage({ chip: S3, version, firmware: UNLOADABLE_FIRMWARE, secureVersion });
const newEfuses = () => new Efuses({ macAddress: '24:0A:C4:10:00:2A', hmacKey: Buffer.alloc(32, 0x5a), hmacKeyBlock: 3 });

/** A chip: its flash factory-programmed (signed with `signWith` unless null), its fuses as given; boot() runs ROM and bootloader. */
function chip(o: { signWith?: KeyObject | null; factoryApp?: Uint8Array; keys?: KeyObject[]; secureVersion?: number; antiRollback?: boolean } = {}) {
  const flash = FlashImage.open(join(dir, `flash-${++n}.bin`), DEFAULT_FLASH_BYTES);
  const table = productPartitions();
  const signWith = o.signWith === undefined ? A : o.signWith;
  flashFactoryImages(flash, { chip: S3, table, app: o.factoryApp ?? app('2026.01.01'), ...(signWith ? { signingKey: signWith } : {}) });
  const efuses = newEfuses();
  burnSecureBootFuses(efuses, { keys: o.keys ?? [A, B], ...(o.secureVersion !== undefined ? { secureVersion: o.secureVersion } : {}) });
  const boot = () => {
    const lines: string[] = [];
    try {
      const booted = runBootloader(flash, new BootLog((l) => lines.push(l)), { chip: S3, reset: 'poweron', efuses, ...(o.antiRollback ? { antiRollback: true } : {}) });
      return { booted, lines, text: lines.join('\n') };
    } catch (err) {
      return { error: err as Error, lines, text: lines.join('\n') };
    }
  };
  /** From the running slot into the other one (state NEW), by serial: nothing but the boot stage checks it. */
  const install = (image: Uint8Array, running: 'ota_0' | 'ota_1' = 'ota_0') => installBySerial(flash, table, image, running);
  const markValid = (running: 'ota_0' | 'ota_1') => new OtaSlots(flash, table, S3, table.find((p) => p.name === running)!).markValid();
  /** Writes bytes over a slot's start, erasing one sector more (a signature sector there goes too). */
  const overwrite = (offset: number, bytes: Uint8Array) => {
    flash.erase(offset, Math.ceil(bytes.length / 0x1000) * 0x1000 + 0x1000);
    flash.program(offset, bytes);
  };
  return { flash, efuses, boot, install, markValid, overwrite };
}

const chips: ReturnType<typeof chip>[] = [];
afterAll(() => chips.forEach((c) => c.flash.close()));
const newChip = (o?: Parameters<typeof chip>[0]) => {
  const c = chip(o);
  chips.push(c);
  return c;
};

describe('the ROM, with SECURE_BOOT_EN', () => {
  it('verifies the signed bootloader and says which key blocks it trusts', () => {
    const r = newChip().boot();
    expect(r.booted?.partition.name).toBe('ota_0');
    const at = r.lines.indexOf('mode:DIO, clock div:1');
    expect(r.lines.slice(at + 1, at + 3)).toEqual(['Valid secure boot key blocks: 0 1', 'secure boot verification succeeded']);
    expect(r.lines[at + 3]).toMatch(/^load:0x/);
  });

  it('stops on an unsigned bootloader or one signed by another key, saying why; a revoked slot is not listed', () => {
    const unsigned = newChip({ signWith: null }).boot();
    expect(unsigned.error).toBeInstanceOf(BootFailure);
    expect(unsigned.error?.message).toMatch(/^secure boot: the second-stage bootloader at 0x0 is refused: not signed \(no signature sector at offset 0x[0-9a-f]+: the image is not signed\)$/);
    expect(unsigned.lines.slice(-3)).toEqual([expect.stringMatching(/^bootloader not signed/), 'secure boot verification failed', 'ets_main.c 329']);
    expect(unsigned.text).not.toMatch(/2nd stage bootloader/);

    const other = newChip({ signWith: C }).boot();
    expect(other.error?.message).toMatch(/refused: signed by a key whose digest is not burned in eFuse \(signature block 0 is signed by key [0-9a-f]{64}, which is not a trusted key\)$/);

    const revoked = newChip();
    revoked.efuses.revokeSecureBootKey(0);
    const r = revoked.boot();
    expect(r.lines).toContain('Valid secure boot key blocks: 1');
    expect(r.error?.message).toMatch(/refused: signed by a revoked key \(signature block 0 is signed by key [0-9a-f]{64} \(SECURE_BOOT_DIGEST0\), which is revoked\)$/);
  });

  it('boots unsigned images as before while SECURE_BOOT_EN is not burned', () => {
    const c = newChip({ signWith: null, keys: [] });
    const r = c.boot();
    expect(r.booted?.partition.name).toBe('ota_0');
    expect(r.text).not.toMatch(/secure boot|secure_boot_v2|Verifying image signature/);
  });
});

describe('the bootloader, with SECURE_BOOT_EN', () => {
  it('boots a slot whose signature verifies, and says secure boot is on', () => {
    const r = newChip().boot();
    for (const line of [
      /^I \(\d+\) esp_image: Verifying image signature\.\.\.$/m,
      /^I \(\d+\) secure_boot_v2: Verifying with RSA-PSS\.\.\.$/m,
      /^I \(\d+\) secure_boot_v2: Signature verified successfully!$/m,
      /^I \(\d+\) boot: Loaded app from partition at offset 0x10000\nI \(\d+\) secure_boot_v2: enabling secure boot v2\.\.\.\nI \(\d+\) secure_boot_v2: secure boot v2 is already enabled, continuing\.\.$/m,
    ]) expect(r.text).toMatch(line);
  });

  it('boots an image signed with the second burned key', () => {
    const c = newChip();
    c.install(signImage(app('2026.02.01'), [B]));
    const r = c.boot();
    expect(r.booted?.partition.name).toBe('ota_1');
    expect(r.booted?.descriptor.version).toBe('2026.02.01');
  });

  const refusedCases: Array<[string, () => Uint8Array, RegExp]> = [
    ['unsigned', () => app('2026.02.01'), /not signed \(no signature sector at offset 0x[0-9a-f]+: the image is not signed\)/],
    ['signed by a key not burned', () => signImage(app('2026.02.01'), [C]), /signed by a key whose digest is not burned in eFuse \(signature block 0 is signed by key [0-9a-f]{64}, which is not a trusted key\)/],
    [
      'changed after signing (a valid image of another version under the first one\'s signature)',
      () => {
        const signed = signImage(app('2026.02.01'), [A]);
        const other = signImage(app('2026.02.02'), [C]);
        expect(other.length).toBe(signed.length);
        return Buffer.concat([other.subarray(0, other.length - 4096), signed.subarray(signed.length - 4096)]);
      },
      /the image changed after signing \(signature block 0: the image digest [0-9a-f]{64} is not the signed [0-9a-f]{64}: the image changed after signing\)/,
    ],
    [
      'whose signature block is damaged',
      () => {
        const signed = Buffer.from(signImage(app('2026.02.01'), [A]));
        signed[signed.length - 4096 + SIG_BLOCK_BYTES - 30]! ^= 0x01; // inside the block, covered by its CRC
        return signed;
      },
      /its signature block is damaged \(signature block 0 is damaged: CRC32 0x[0-9a-f]{8} stored, 0x[0-9a-f]{8} calculated\)/,
    ],
  ];
  it.each(refusedCases)('refuses an image %s, saying why, and falls back to the other slot', (_, image, why) => {
    const c = newChip();
    c.install(image());
    const r = c.boot();
    expect(r.text).toMatch(new RegExp(`^E \\(\\d+\\) secure_boot_v2: image at 0x310000: ${why.source}$`, 'm'));
    expect(r.text).toMatch(/^E \(\d+\) secure_boot_v2: Secure Boot V2 verification failed\.\nE \(\d+\) esp_image: Secure boot signature verification failed\nW \(\d+\) esp_image: image valid, signature bad\nE \(\d+\) boot: OTA app partition slot 1 is not bootable$/m);
    expect(r.booted?.partition.name).toBe('ota_0');
    expect(r.booted?.descriptor.version).toBe('2026.01.01');
  });

  it('refuses an image signed by a key revoked since, and boots it again never', () => {
    const c = newChip();
    c.install(signImage(app('2026.02.01'), [B]));
    expect(c.boot().booted?.partition.name).toBe('ota_1');
    c.markValid('ota_1');
    c.efuses.revokeSecureBootKey(1);
    const r = c.boot();
    expect(r.text).toMatch(/^E \(\d+\) secure_boot_v2: image at 0x310000: signed by a revoked key \(signature block 0 is signed by key [0-9a-f]{64} \(SECURE_BOOT_DIGEST1\), which is revoked\)$/m);
    expect(r.booted?.partition.name).toBe('ota_0');
  });

  it('does not boot when no slot verifies, and says why for each', () => {
    const c = newChip();
    c.overwrite(0x10000, app('2026.01.01'));
    c.install(signImage(app('2026.02.01'), [C]));
    const r = c.boot();
    expect(r.error).toBeInstanceOf(BootFailure);
    expect(r.error?.message).toMatch(/^no bootable app partition \(ota_1: secure boot: signed by a key whose digest is not burned in eFuse \(.+\); ota_0: secure boot: not signed \(.+\)\)$/);
    expect(r.text).toMatch(/^E \(\d+\) boot: OTA app partition slot 0 is not bootable\nE \(\d+\) boot: No bootable app partitions in the partition table$/m);
  });
});

describe('anti-rollback (CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK)', () => {
  it('raises SECURE_VERSION to the factory app\'s when it boots from initial otadata', () => {
    const c = newChip({ factoryApp: app('2026.01.01', 2), antiRollback: true });
    expect(c.efuses.secureVersion).toBe(0);
    const r = c.boot();
    expect(r.text).toMatch(/^I \(\d+\) boot: Enabled a check secure version of app for anti rollback\nI \(\d+\) boot: Secure version \(from eFuse\) = 0\nI \(\d+\) boot: otadata\[0\.\.1\] in initial state$/m);
    expect(r.text).toMatch(/^I \(\d+\) boot: Set actual ota_seq=1 in otadata\[0\]\nI \(\d+\) efuse: Anti-rollback is set\. eFuse field is updated\(2\)\.$/m);
    expect(c.efuses.secureVersion).toBe(2);
    expect(getField(c.efuses.block0(), 'SECURE_VERSION')).toBe(0b11); // what espefuse reads: two bits burned
  });

  it('never boots an image below the counter: the entry is passed over, and the slot itself refused', () => {
    const c = newChip({ factoryApp: app('2026.01.01', 2), secureVersion: 2, antiRollback: true });
    c.boot();
    c.install(signImage(app('2026.02.01', 1), [A]));
    const r = c.boot();
    expect(r.text).toMatch(/^W \(\d+\) boot: otadata\[1\] \(ota_seq 2\) is not selected: OTA slot 1: app 2026\.02\.01 has secure_version 1, below the eFuse SECURE_VERSION 2: anti-rollback never boots it$/m);
    expect(r.booted?.partition.name).toBe('ota_0');
    // The slot itself, when the chosen one does not verify: refused too, so nothing boots.
    c.overwrite(0x10000, app('2026.01.01', 2));
    const none = c.boot();
    expect(none.text).toMatch(/^E \(\d+\) boot: OTA app partition slot 1: app 2026\.02\.01 has secure_version 1, below the eFuse SECURE_VERSION 2: anti-rollback never boots it\nE \(\d+\) boot: OTA app partition slot 1 is not bootable$/m);
    expect(none.error).toBeInstanceOf(BootFailure);
    expect(c.efuses.secureVersion).toBe(2);
  });

  it('raises the counter only once a higher image is confirmed, not while it is PENDING_VERIFY', () => {
    const c = newChip({ factoryApp: app('2026.01.01', 1), secureVersion: 1, antiRollback: true });
    c.boot();
    c.install(signImage(app('2026.02.01', 3), [A]));
    const pending = c.boot();
    expect(pending.booted?.partition.name).toBe('ota_1');
    expect(pending.text).toMatch(/PENDING_VERIFY until the app marks it valid/);
    expect(pending.text).not.toMatch(/Anti-rollback is set/);
    expect(c.efuses.secureVersion).toBe(1);
    expect(c.markValid('ota_1')).toBe(true);
    const confirmed = c.boot();
    expect(confirmed.booted?.partition.name).toBe('ota_1');
    expect(confirmed.text).toMatch(/^I \(\d+\) efuse: Anti-rollback is set\. eFuse field is updated\(3\)\.$/m);
    expect(c.efuses.secureVersion).toBe(3);
    // The factory image (secure_version 1) in ota_0 can never come back now.
    c.overwrite(OTA_1, new Uint8Array(0x1000)); // ota_1 destroyed
    const fallback = c.boot();
    expect(fallback.text).toMatch(/slot 0: app 2026\.01\.01 has secure_version 1, below the eFuse SECURE_VERSION 3/);
    expect(fallback.error).toBeInstanceOf(BootFailure);
  });

  it('an image that does not verify never raises the counter', () => {
    const c = newChip({ factoryApp: app('2026.01.01', 0), antiRollback: true });
    c.boot();
    c.install(signImage(app('2026.02.01', 5), [C]));
    c.boot();
    expect(c.efuses.secureVersion).toBe(0);
  });

  it('is off unless the bootloader is built with it: a lower secure_version boots', () => {
    const c = newChip({ factoryApp: app('2026.01.01', 0), secureVersion: 4 });
    const r = c.boot();
    expect(r.booted?.partition.name).toBe('ota_0');
    expect(r.text).not.toMatch(/anti rollback|Anti-rollback/);
    expect(c.efuses.secureVersion).toBe(4);
  });
});

describe('burning the secure boot fuses', () => {
  it('puts the digests in free key blocks (the HMAC key stays), sets SECURE_BOOT_EN, and refuses bad input before burning', () => {
    const e = newEfuses();
    burnSecureBootFuses(e, { keys: [A, B, C], secureVersion: 3 });
    expect(e.keys.map((k) => k.purpose)).toEqual(['SECURE_BOOT_DIGEST0', 'SECURE_BOOT_DIGEST1', 'SECURE_BOOT_DIGEST2', 'HMAC_UP', 'USER', 'USER']);
    expect(e.secureBootEnabled).toBe(true);
    expect(e.secureVersion).toBe(3);
    const fresh = newEfuses();
    expect(() => burnSecureBootFuses(fresh, { keys: [A, B, C, A] })).toThrow(/3 secure boot key digest slots: 4 keys given/);
    expect(() => burnSecureBootFuses(fresh, { keys: [A, A] })).toThrow(/the same secure boot key is given twice/);
    expect(() => burnSecureBootFuses(fresh, { keys: [generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey] })).toThrow(/RSA-3072 only; this is an EC key/);
    expect(() => burnSecureBootFuses(fresh, { keys: [A], secureVersion: 17 })).toThrow(/SECURE_VERSION counts 0 to 16, not 17/);
    expect(fresh.keys.every((k, i) => (i === 3 ? k.purpose === 'HMAC_UP' : k.purpose === 'USER'))).toBe(true);
    expect(fresh.secureBootEnabled).toBe(false);
    // One-way: a chip whose digest slots are burned takes no more.
    expect(() => burnSecureBootFuses(e, { keys: [C] })).toThrow(/SECURE_BOOT_DIGEST0 is already burned in BLOCK_KEY0/);
  });
});
