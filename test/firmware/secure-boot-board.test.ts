// Secure Boot v2 and anti-rollback on virtual boards running the product's firmware (the SDK's host
// build): a board whose chip has key digests and SECURE_BOOT_EN burned boots only the images signed
// by a burned, unrevoked key, falling back to the other slot or not booting at all, and says why on
// its console; with the anti-rollback bootloader an image below SECURE_VERSION never boots, across
// power cuts, and booting a confirmed higher one raises the counter. Images go into the passive slot
// with the virtual chip's esp_ota_ops while the board is off (as boot-rollback.test.ts does); the
// boot stage's every case on its own: secure-boot-stage.test.ts. Then `fleet virtual
// --secure-boot-key` as a user runs it, with a key made by openssl, read back through the ROM.
import { execFileSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHIPS } from '../../firmware/image/chips.ts';
import { publicKeyDigest, signImage } from '../../firmware/image/secure-boot.ts';
import { burnSecureBootFuses } from '../../firmware/virtual-esp32/boot-signatures.ts';
import { BootFailure, SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { Efuses, manifestHmacKeyBlock } from '../../firmware/virtual-esp32/efuse.ts';
import { DEFAULT_FLASH_BYTES, firmwareImage, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import { FlashImage } from '../../firmware/virtual-esp32/flash-image.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { runFleet } from '../helpers/fleet-cli.ts';
import { installBySerial } from '../helpers/serial-install.ts';
import { startVirtual, TWO_BOARD_RIG } from '../helpers/fleet-virtual.ts';

const S3 = CHIPS.esp32s3;
const FUSE_KEY = '77'.repeat(32);
let dir: string;
let n = 0;
/** A, B: burned in SECURE_BOOT_DIGEST0, 1; C: a key the chips do not know. */
let A: KeyObject, B: KeyObject, C: KeyObject;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'secure-boot-board-'));
  [A, B, C] = [0, 1, 2].map(() => generateKeyPairSync('rsa', { modulusLength: 3072 }).privateKey) as [KeyObject, KeyObject, KeyObject];
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const identity = (): DeviceIdentity => ({ uuid: `sb-${++n}`, role: 'controller', ethernetMac: `24:0A:C4:E8:00:${n.toString(16).padStart(2, '0')}`, wifiMac: `24:0A:C4:18:00:${n.toString(16).padStart(2, '0')}`, hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' });
/** An app image of the boards' own build at `version`, unsigned. */
const imageOf = (version: string, secureVersion = 0) => firmwareImage(version, { variant: variantOf({ role: 'controller', hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', build: 'production', ethernetMac: '24:0A:C4:E8:00:00' }), secureVersion });

/**
 * A board whose chip has secure boot on (A and B burned): its eFuse model made once and given to
 * every start, as the chip keeps its fuses across resets and power cuts; its factory signs with A.
 */
function secureBoard(o: { secureVersion?: number; antiRollback?: boolean; factoryKey?: KeyObject } = {}) {
  const id = identity();
  const flashDir = join(dir, id.uuid);
  const efuses = new Efuses({ macAddress: id.wifiMac, hmacKey: Buffer.from(FUSE_KEY, 'hex'), hmacKeyBlock: manifestHmacKeyBlock() });
  burnSecureBootFuses(efuses, { keys: [A, B], ...(o.secureVersion !== undefined ? { secureVersion: o.secureVersion } : {}) });
  const lines: string[] = [];
  const start = (reset: 'poweron' | 'software' = 'software') => {
    lines.length = 0;
    return startSdkBoard({
      identity: id,
      efuses,
      flashDir,
      adminPassword: 'bench-admin-password',
      reset,
      factorySigningKey: o.factoryKey ?? A,
      ...(o.secureVersion ? { factorySecureVersion: o.secureVersion } : {}),
      ...(o.antiRollback ? { antiRollback: true } : {}),
      onConsoleLine: (l) => lines.push(l),
    });
  };
  /**
   * `image` put on the board's flash while it is off, into the slot after `running`, as a serial
   * flashing tool and otatool's switch_ota_partition would (no check of the image: the OTA client's
   * own refusal is sdk-board-ota-signed.test.ts's), selected for the next boot in state NEW.
   */
  const installWhileOff = (image: Uint8Array, running: 'ota_0' | 'ota_1' = 'ota_0') => {
    const flash = FlashImage.open(`${flashDir}.bin`, DEFAULT_FLASH_BYTES);
    try {
      installBySerial(flash, productPartitions(), image, running);
    } finally {
      flash.close();
    }
  };
  return { efuses, start, installWhileOff, lines, text: () => lines.join('\n'), flashDir };
}

async function firmwareVersion(b: SdkBoard): Promise<string> {
  const answer = await b.typeLine('status');
  expect(answer).toMatch(/^OK /);
  return (JSON.parse(answer.slice(3)) as { firmware_version: string }).firmware_version;
}

/** Starts the board, checks it fell back to the factory image in ota_0 after refusing ota_1 for `why`, and closes it. */
async function refusedAndFellBack(b: ReturnType<typeof secureBoard>, why: RegExp): Promise<void> {
  const board = await b.start();
  try {
    expect(b.text()).toMatch(new RegExp(`^E \\(\\d+\\) secure_boot_v2: image at 0x310000: ${why.source}`, 'm'));
    expect(b.text()).toMatch(/^E \(\d+\) boot: OTA app partition slot 1 is not bootable$/m);
    expect(board.runningImage?.partition.name).toBe('ota_0');
    expect(await firmwareVersion(board)).toBe('2026.01.01');
  } finally {
    await board.close();
  }
}

describe('a virtual board with secure boot on', () => {
  it('boots its signed factory image, refuses unsigned, other-key, tampered and revoked-key images in favour of it, and does not boot when no slot verifies', { timeout: 240_000 }, async () => {
    const b = secureBoard();
    const first = await b.start('poweron');
    try {
      expect(b.text()).toMatch(/^Valid secure boot key blocks: 0 1\nsecure boot verification succeeded$/m);
      expect(b.text()).toMatch(/^I \(\d+\) secure_boot_v2: Signature verified successfully!$/m);
      expect(b.text()).toMatch(/^I \(\d+\) secure_boot_v2: secure boot v2 is already enabled, continuing\.\.$/m);
      expect(await firmwareVersion(first)).toBe('2026.01.01');
    } finally {
      await first.close();
    }

    b.installWhileOff(await imageOf('2026.02.01'));
    await refusedAndFellBack(b, /not signed \(no signature sector/);

    b.installWhileOff(signImage(await imageOf('2026.02.01'), [C]));
    await refusedAndFellBack(b, /signed by a key whose digest is not burned in eFuse/);

    // A valid image of another version under a signature made for the first: the image changed after signing.
    const signed = signImage(await imageOf('2026.03.01'), [A]);
    const other = signImage(await imageOf('2026.03.02'), [A]);
    b.installWhileOff(Buffer.concat([other.subarray(0, other.length - 4096), signed.subarray(signed.length - 4096)]));
    await refusedAndFellBack(b, /the image changed after signing/);

    // Signed with the second burned key: it boots, and confirms itself; once that key is revoked, never again.
    b.installWhileOff(signImage(await imageOf('2026.04.01'), [B]));
    const second = await b.start();
    try {
      expect(second.runningImage?.partition.name).toBe('ota_1');
      expect(await firmwareVersion(second)).toBe('2026.04.01');
      await expect.poll(() => second.consoleLines).toContain('LOG INFO ota: firmware 2026.04.01 in ota_1 is up: marked valid, rollback cancelled');
    } finally {
      await second.close();
    }
    b.efuses.revokeSecureBootKey(1);
    await refusedAndFellBack(b, /signed by a revoked key \(signature block 0 is signed by key [0-9a-f]{64} \(SECURE_BOOT_DIGEST1\), which is revoked\)/);

    // ota_0 overwritten with an unsigned image too: nothing verifies, the board does not start, and says why.
    const flash = FlashImage.open(`${b.flashDir}.bin`, DEFAULT_FLASH_BYTES);
    const unsigned = await imageOf('2026.01.01');
    flash.erase(0x10000, Math.ceil(unsigned.length / 0x1000) * 0x1000 + 0x1000);
    flash.program(0x10000, unsigned);
    flash.close();
    const refused = b.start();
    await expect(refused).rejects.toBeInstanceOf(BootFailure);
    await expect(refused).rejects.toThrow(/^no bootable app partition \(ota_1: secure boot: signed by a revoked key .+; ota_0: secure boot: not signed .+\)$/);
    expect(b.text()).toMatch(/^E \(\d+\) boot: No bootable app partitions in the partition table$/m);
    expect(b.text()).not.toMatch(/app_init/);
  });
});

describe('the ROM of a virtual board with secure boot on', () => {
  it('does not start a bootloader signed by a key that is not burned, and says why', async () => {
    const b = secureBoard({ factoryKey: C });
    const start = b.start('poweron');
    await expect(start).rejects.toBeInstanceOf(BootFailure);
    await expect(start).rejects.toThrow(/^secure boot: the second-stage bootloader at 0x0 is refused: signed by a key whose digest is not burned in eFuse \(signature block 0 is signed by key [0-9a-f]{64}, which is not a trusted key\)$/);
    expect(b.lines.slice(3)).toEqual([
      'SPIWP:0xee',
      'mode:DIO, clock div:1',
      'Valid secure boot key blocks: 0 1',
      expect.stringMatching(/^bootloader signed by a key whose digest is not burned in eFuse/),
      'secure boot verification failed',
      'ets_main.c 329',
    ]);
  });
});

describe('a virtual board with the anti-rollback bootloader', () => {
  it('raises SECURE_VERSION when a confirmed higher image boots, and never boots one below it, across power cuts', { timeout: 180_000 }, async () => {
    const b = secureBoard({ secureVersion: 1, antiRollback: true });
    const first = await b.start('poweron');
    try {
      expect(b.text()).toMatch(/^I \(\d+\) boot: Secure version \(from eFuse\) = 1$/m);
      expect(first.runningImage?.descriptor.secureVersion).toBe(1);
    } finally {
      await first.close();
    }

    // secure_version 2: boots PENDING_VERIFY, the firmware confirms it; then the power goes.
    b.installWhileOff(signImage(await imageOf('2026.02.01', 2), [A]));
    const second = await b.start();
    await expect.poll(() => second.consoleLines).toContain('LOG INFO ota: firmware 2026.02.01 in ota_1 is up: marked valid, rollback cancelled');
    await second.cutPower();
    await second.close();
    // Powered up again: the bootloader boots the confirmed image and the counter is 2 (burned by it, if the firmware's confirmation had not).
    const third = await b.start('poweron');
    try {
      expect(third.runningImage?.partition.name).toBe('ota_1');
      expect(b.efuses.secureVersion).toBe(2);
    } finally {
      await third.close();
    }

    // A signed image with secure_version 1, below the counter: selected by otadata, but never booted.
    b.installWhileOff(signImage(await imageOf('2026.03.01', 1), [A]), 'ota_1');
    for (const reset of ['software', 'poweron'] as const) {
      const board = await b.start(reset);
      try {
        expect(b.text()).toMatch(/^W \(\d+\) boot: otadata\[\d\] \(ota_seq 3\) is not selected: OTA slot 0: app 2026\.03\.01 has secure_version 1, below the eFuse SECURE_VERSION 2: anti-rollback never boots it$/m);
        expect(board.runningImage?.partition.name).toBe('ota_1');
        expect(await firmwareVersion(board)).toBe('2026.02.01');
        if (reset === 'software') await board.cutPower();
      } finally {
        await board.close();
      }
    }
    expect(b.efuses.secureVersion).toBe(2);
  });
});

describe('fleet virtual --secure-boot-key', () => {
  let keyPem: string;
  let pubPem: string;
  beforeAll(() => {
    keyPem = join(dir, 'sb-key.pem');
    pubPem = join(dir, 'sb-pub.pem');
    execFileSync('openssl', ['genrsa', '-out', keyPem, '3072'], { stdio: 'ignore' });
    execFileSync('openssl', ['rsa', '-in', keyPem, '-pubout', '-out', pubPem], { stdio: 'ignore' });
  }, 60_000);

  it('starts the board with the digest burned, SECURE_BOOT_EN and SECURE_VERSION, booting its signed factory image', { timeout: 180_000 }, async () => {
    const v = startVirtual([TWO_BOARD_RIG, 'source', '--secure-boot-key', keyPem, '--anti-rollback', '--secure-version', '2']);
    try {
      const board = await v.board('source', 120_000);
      const line = await v.line(/^board source .*/);
      expect(line[0]).not.toMatch(/mode=/); // running its app: not halted
      const summary = await runFleet(['efuse', 'summary', '--port', board.rfc2217], { timeoutMs: 60_000 });
      expect(summary.code).toBe(0);
      const digest = publicKeyDigest(createPrivateKey(readFileSync(keyPem))).toString('hex');
      expect(summary.stdout).toMatch(/^SECURE_BOOT_EN \(BLOCK0\) +Set this bit to enable secure boot += True R\/W$/m);
      expect(summary.stdout).toMatch(/^KEY_PURPOSE_0 \(BLOCK0\) +Purpose of Key0 += SECURE_BOOT_DIGEST0 \(0x9\) R\/-$/m);
      expect(summary.stdout).toMatch(new RegExp(`^BLOCK_KEY0 \\(BLOCK4\\) +Purpose: SECURE_BOOT_DIGEST0 += ${digest.replace(/(..)(?!$)/g, '$1 ')} R/-$`, 'm'));
      expect(summary.stdout).toMatch(/^KEY_PURPOSE_3 \(BLOCK0\) +Purpose of Key3 += HMAC_UP \(0x8\) R\/-$/m);
      expect(summary.stdout).toMatch(/^SECURE_VERSION \(BLOCK0\) +Secure version for anti-rollback += 2 R\/W$/m);
    } finally {
      const end = await v.stop();
      expect(end.code).toBe(0);
    }
  });

  it('refuses a public first key, a file that is not a key, an encrypted key, a missing file and a SECURE_VERSION beyond 16, with exit 2, starting nothing', { timeout: 60_000 }, async () => {
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'not a key\n');
    const encrypted = join(dir, 'sb-encrypted.pem');
    execFileSync('openssl', ['rsa', '-in', keyPem, '-aes256', '-passout', 'pass:secret', '-out', encrypted], { stdio: 'ignore' });
    const cases: Array<[string[], RegExp]> = [
      [['--secure-boot-key', pubPem], /^fleet: --secure-boot-key .*sb-pub\.pem is a public key: the first key signs the factory images, so it must be the private key\n$/],
      [['--secure-boot-key', junk], /^fleet: --secure-boot-key .*junk\.pem is not a PEM private key \(make one with: openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:3072 -out key\.pem\)\n$/],
      [['--secure-boot-key', encrypted], /^fleet: --secure-boot-key .*sb-encrypted\.pem is encrypted: give it without a passphrase \(openssl pkey -in it -out plain\.pem\)\n$/],
      [['--secure-boot-key', join(dir, 'missing.pem')], /^fleet: the secure boot key: cannot open .*missing\.pem: no such file or folder; check the path\n$/],
      [['--secure-boot-key', keyPem, '--secure-boot-key', pubPem], /^fleet: --secure-boot-key .*sb-pub\.pem: the same key as .*sb-key\.pem\n$/],
      [['--secure-version', '17'], /--secure-version <n>' argument '17' is invalid\. must be a whole number from 0 to 16/],
    ];
    for (const [args, message] of cases) {
      const r = await runFleet(['virtual', TWO_BOARD_RIG, 'source', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });
});
