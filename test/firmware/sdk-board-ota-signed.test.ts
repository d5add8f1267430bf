// The OTA client checks the downloaded image's Secure Boot v2 signature before the slot is switched,
// and anti-rollback holds across an OTA (docs/secure-boot.md, "The OTA client"). Virtual boards
// (SdkBoard: the firmware the Moddable SDK builds for the host, on a virtual ESP32-S3 with its
// eFuses) install releases a test cloud hosts; the keys are RSA-3072 PEM files made by the openssl
// binary. A refused image leaves the boot slot as it was, the board does not reboot, and the cloud
// counts a failed install of the version offered.
import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAppImageBytes } from '../../firmware/image/app-image.ts';
import { publicKeyDigest, signImage, verifySignedImageBytes } from '../../firmware/image/secure-boot.ts';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { Efuses, manifestHmacKeyBlock } from '../../firmware/virtual-esp32/efuse.ts';
import { DEFAULT_FLASH_BYTES, firmwareImage, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import { FlashImage } from '../../firmware/virtual-esp32/flash-image.ts';
import { OtaSlots } from '../../firmware/virtual-esp32/ota-slots.ts';
import { CHIPS } from '../../firmware/image/chips.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const TRACK = '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3';
let dir: string;
let n = 0;
const identity = (): DeviceIdentity => {
  const i = (++n).toString(16).padStart(2, '0');
  return { uuid: `ctl-signed-${i}`, role: 'controller', ethernetMac: `24:0A:C4:E5:00:${i}`, wifiMac: `24:0A:C4:15:00:${i}`, hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' };
};
/** The boards' own build (one SDK build for the file) at `version`. */
const imageOf = (version: string, secureVersion = 0) =>
  firmwareImage(version, { variant: variantOf({ role: 'controller', hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', build: 'production', ethernetMac: '24:0A:C4:E5:00:00' }), secureVersion });

/** An RSA-3072 key made by the openssl binary, as `fleet image sign --key` takes it. */
function opensslKey(name: string): KeyObject {
  const path = join(dir, `${name}.pem`);
  execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:3072', '-out', path], { stdio: 'pipe' });
  return createPrivateKey(readFileSync(path));
}

/**
 * A signed image changed after signing: one byte of its second (IRAM) segment flipped, the image
 * checksum and appended SHA-256 made right again, so that it is a valid app image (and the manifest's
 * SHA-256 is of these bytes) whose signature block was made over other bytes.
 */
function tampered(signed: Buffer, unsignedLength: number): Buffer {
  const out = Buffer.from(signed);
  const check = verifyAppImageBytes(out.subarray(0, unsignedLength));
  expect(check.ok && check.header?.hashAppended).toBe(true);
  const at = check.segments[1]!.dataOffset;
  out[at]! ^= 0x01;
  out[check.length - 32 - 1]! ^= 0x01; // the XOR checksum of the segments' bytes
  createHash('sha256').update(out.subarray(0, check.length - 32)).digest().copy(out, check.length - 32);
  expect(verifyAppImageBytes(out.subarray(0, unsignedLength)).ok).toBe(true);
  return out;
}

const efusesFor = (id: DeviceIdentity) => new Efuses({ macAddress: id.wifiMac, hmacKey: Buffer.from('33'.repeat(32), 'hex'), hmacKeyBlock: manifestHmacKeyBlock() });
/** Key blocks other than the HMAC key's, for the secure boot digests. */
const digestBlocks = [0, 1, 2, 3, 4, 5].filter((b) => b !== manifestHmacKeyBlock());

let k1: KeyObject;
let k2: KeyObject;
let other: KeyObject;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-ota-signed-'));
  k1 = opensslKey('k1');
  k2 = opensslKey('k2');
  other = opensslKey('other');
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A board on its own flash and eFuses, a cloud it is enrolled with, and the steps the cases take. */
async function rig(name: string, o: { antiRollback?: boolean; factoryKey?: KeyObject } = {}) {
  const id = identity();
  const efuses = efusesFor(id);
  const flashDir = join(dir, name);
  const cloud = await startTestCloud();
  // The flash takes no time here: what is proved is which images a board takes, not at what pace it
  // writes them (sdk-board-slow-reader.test.ts and the bench run with the flash's own times).
  const start = () => startSdkBoard({ identity: id, efuses, flashDir, adminPassword: 'bench-admin-password', flashTiming: 'off', ...(o.antiRollback ? { antiRollback: true } : {}), ...(o.factoryKey ? { factorySigningKey: o.factoryKey } : {}) });
  const release = async (version: string, image: Uint8Array) => {
    const up = await fetch(`${cloud.url}${TRACK}/${version}/image`, { method: 'PUT', headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'application/octet-stream' }, body: image });
    expect(up.status).toBe(201);
  };
  const revoke = async (version: string) => expect((await cloud.admin('POST', `${TRACK}/${version}/revoke`)).status).toBe(200);
  const outcomes = async (version: string) => {
    await cloud.cloud.inventory.flush();
    const list = (await cloud.adminJson('GET', TRACK)).body as { versions: { version: string; outcomes: { failed: number; succeeded: number } }[] };
    return list.versions.find((v) => v.version === version)?.outcomes;
  };
  /**
   * The virtual chip's esp_ota_ops on the board's flash while it is off, as if the firmware ran them:
   * secure boot is not on yet, so the running image's own signature decides (none: no check).
   */
  const installWhileOff = (image: Uint8Array) => {
    const flash = FlashImage.open(`${flashDir}.bin`, DEFAULT_FLASH_BYTES);
    try {
      const table = productPartitions();
      const update = new OtaSlots(flash, table, CHIPS.esp32s3, table.find((p) => p.name === 'ota_0')!).begin(image.length);
      update.write(image);
      update.finish();
    } finally {
      flash.close();
    }
  };
  /** First start: enrolled with the cloud, its URL set. */
  const enroll = async (board: SdkBoard) => {
    const key = JSON.parse((await board.typeLine('pubkey')).slice(3)).public_key_pem as string;
    expect((await cloud.admin('PUT', `/admin/devices/${id.uuid}`, { public_key: key })).status).toBe(201);
    expect(await board.typeLine(`cloud ${cloud.url}`)).toMatch(/^OK /);
  };
  return { id, efuses, cloud, start, release, revoke, outcomes, installWhileOff, enroll };
}

/**
 * `ota check` on the console. The virtual network's download can give up under load
 * (download_failed, which sdk-board-ota-resume.test.ts is about, not these cases): then once more.
 */
async function otaCheck(board: SdkBoard): Promise<string> {
  const answer = await board.typeLine('ota check');
  return answer.startsWith('ERR download_failed ') ? board.typeLine('ota check') : answer;
}

/** `ota check` refused by the chip: the answer, the board still running `version`, no reboot. */
async function refused(board: SdkBoard, code: string, version: string): Promise<string> {
  const answer = await otaCheck(board);
  expect(answer).toMatch(new RegExp(`^ERR ${code} `));
  await new Promise((r) => setTimeout(r, 1500)); // a reboot would have been asked by now (core/reboot.ts)
  expect(board.reboots).toEqual([]);
  expect(board.identity.firmwareVersion).toBe(version);
  expect(JSON.parse((await board.typeLine('status')).slice(3)).firmware_version).toBe(version);
  return answer;
}

describe('secure boot on: the eFuse key digests decide', () => {
  it('installs an image signed by a trusted key; refuses unsigned, another key, a revoked key and a tampered image without rebooting, each counted as a failed install', { timeout: 300_000 }, async () => {
    // The factory's bootloader and app signed with K1: the ROM checks the bootloader once secure boot is on.
    const r = await rig('secure-boot-on', { factoryKey: k1 });
    try {
      const first = await r.start();
      await r.enroll(first);
      await first.close();
      // The fleet's first signed release, then the eFuses: K1 trusted, K2 burned and revoked, secure boot on.
      r.installWhileOff(signImage(await imageOf('2026.02.01'), [k1]));
      r.efuses.burnKey(digestBlocks[0]!, 'SECURE_BOOT_DIGEST0', publicKeyDigest(k1));
      r.efuses.burnKey(digestBlocks[1]!, 'SECURE_BOOT_DIGEST1', publicKeyDigest(k2));
      r.efuses.revokeSecureBootKey(1);
      r.efuses.enableSecureBoot();
      let board = await r.start();
      try {
        expect(board.identity.firmwareVersion).toBe('2026.02.01');
        expect(board.runningImage?.partition.name).toBe('ota_1');

        const cases: [string, Uint8Array, RegExp][] = [
          ['2026.03.01', await imageOf('2026.03.01'), /\(unsigned\): no signature sector/],
          ['2026.03.02', signImage(await imageOf('2026.03.02'), [other]), new RegExp(`\\(untrusted\\): signature block 0 is signed by key ${publicKeyDigest(other).toString('hex')}, which is not a trusted key`)],
          ['2026.03.03', signImage(await imageOf('2026.03.03'), [k2]), new RegExp(`\\(revoked\\): signature block 0 is signed by key ${publicKeyDigest(k2).toString('hex')} \\(SECURE_BOOT_DIGEST1\\), which is revoked`)],
          ['2026.03.04', tampered(signImage(await imageOf('2026.03.04'), [k1]), (await imageOf('2026.03.04')).length), /\(tampered\): signature block 0: the image digest [0-9a-f]{64} is not the signed [0-9a-f]{64}: the image changed after signing/],
        ];
        for (const [version, image, why] of cases) {
          await r.release(version, image);
          const answer = await refused(board, 'signature_invalid', '2026.02.01');
          expect(answer).toContain(`refusing ${version}: Secure Boot V2 verification failed`);
          expect(answer).toMatch(why);
          expect(answer).toContain('the keys trusted are the eFuse key digests (SECURE_BOOT_EN)');
          expect(await r.outcomes(version)).toMatchObject({ failed: 1, succeeded: 0 });
          await r.revoke(version); // the next case's version is the one offered next
        }
        // The UART says why (native/fw_ota.c logs it with ESP_LOGE).
        expect(board.consoleLines.join('\n')).toMatch(/^E \(\d+\) fw_ota: Secure Boot V2 verification failed \(tampered\)/m);

        // The boot slot never changed: a reset boots the same image.
        await board.close();
        board = await r.start();
        expect(board.identity.firmwareVersion).toBe('2026.02.01');
        expect(board.runningImage?.partition.name).toBe('ota_1');

        // An image signed by the trusted key installs and boots.
        await r.release('2026.03.05', signImage(await imageOf('2026.03.05'), [k1]));
        expect(await otaCheck(board)).toMatch(/^OK \{"kind":"installed","version":"2026\.03\.05"/);
        await expect.poll(() => board.reboots, { timeout: 10_000 }).toContain('ota 2026.03.05');
        await board.settled();
        expect(board.identity.firmwareVersion).toBe('2026.03.05');
        expect(board.runningImage?.partition.name).toBe('ota_0');
      } finally {
        await board.close();
      }
    } finally {
      await r.cloud.close();
    }
  });
});

describe('secure boot off, the running image signed: its own key decides', () => {
  it('refuses an unsigned image and one signed by another key; installs one signed by the running key', { timeout: 300_000 }, async () => {
    const r = await rig('secure-boot-off');
    try {
      const first = await r.start();
      await r.enroll(first);
      await first.close();
      r.installWhileOff(signImage(await imageOf('2026.02.01'), [k1]));
      const board = await r.start();
      try {
        expect(board.identity.firmwareVersion).toBe('2026.02.01');
        await r.release('2026.03.01', await imageOf('2026.03.01'));
        expect(await refused(board, 'signature_invalid', '2026.02.01')).toMatch(/\(unsigned\).*the keys trusted are the running image's signature \(key [0-9a-f]{64}\)/);
        expect(await r.outcomes('2026.03.01')).toMatchObject({ failed: 1 });
        await r.revoke('2026.03.01');
        // Signed by another key first, by the running key second: without secure boot only the first block counts.
        await r.release('2026.03.02', signImage(signImage(await imageOf('2026.03.02'), [other]), [k1], { append: true }));
        expect(await refused(board, 'signature_invalid', '2026.02.01')).toMatch(/\(untrusted\): signature block 0 is signed by key [0-9a-f]{64}; without secure boot only the first block counts/);
        await r.revoke('2026.03.02');
        await r.release('2026.03.03', signImage(await imageOf('2026.03.03'), [k1]));
        expect(await otaCheck(board)).toMatch(/^OK \{"kind":"installed","version":"2026\.03\.03"/);
        await expect.poll(() => board.reboots, { timeout: 10_000 }).toContain('ota 2026.03.03');
        await board.settled();
        expect(board.identity.firmwareVersion).toBe('2026.03.03');
      } finally {
        await board.close();
      }
    } finally {
      await r.cloud.close();
    }
  });
});

describe('anti-rollback on', () => {
  it('burns SECURE_VERSION when a higher image is confirmed, keeps it across a power cut, and refuses a lower one without rebooting', { timeout: 300_000 }, async () => {
    const r = await rig('anti-rollback', { antiRollback: true });
    try {
      let board = await r.start();
      try {
        await r.enroll(board);
        expect(r.efuses.secureVersion).toBe(0);
        await r.release('2026.02.01', await imageOf('2026.02.01', 2));
        expect(await otaCheck(board)).toMatch(/^OK \{"kind":"installed","version":"2026\.02\.01"/);
        await expect.poll(() => board.reboots, { timeout: 10_000 }).toContain('ota 2026.02.01');
        await board.settled();
        expect(board.identity.firmwareVersion).toBe('2026.02.01');
        // Confirmed once up (esp_ota_mark_app_valid_cancel_rollback): the counter follows.
        await expect.poll(() => board.consoleLines).toContain('LOG INFO ota: firmware 2026.02.01 in ota_1 is up: marked valid, rollback cancelled');
        expect(r.efuses.secureVersion).toBe(2);

        // A power cut, and the chip powered on again: the eFuse counter stays.
        await board.cutPower();
        await board.close();
        board = await r.start();
        expect(r.efuses.secureVersion).toBe(2);
        expect(board.identity.firmwareVersion).toBe('2026.02.01');

        // A release whose secure_version is lower: esp_ota_set_boot_partition refuses it.
        await r.release('2026.03.01', await imageOf('2026.03.01', 1));
        expect(await refused(board, 'secure_version_too_low', '2026.02.01')).toContain("refusing 2026.03.01: the image's secure_version 1 is below the eFuse SECURE_VERSION 2");
        expect(await r.outcomes('2026.03.01')).toMatchObject({ failed: 1 });
        expect(r.efuses.secureVersion).toBe(2);
        expect(board.consoleLines.join('\n')).toMatch(/^E \(\d+\) fw_ota: the image's secure_version 1 is below the eFuse SECURE_VERSION 2/m);
      } finally {
        await board.close();
      }
      // The old image (secure_version 0, still in ota_0) cannot be made the boot slot again.
      const flash = FlashImage.open(join(dir, 'anti-rollback.bin'), DEFAULT_FLASH_BYTES);
      try {
        const table = productPartitions();
        const update = new OtaSlots(flash, table, CHIPS.esp32s3, table.find((p) => p.name === 'ota_1')!, { efuses: r.efuses, antiRollback: true }).begin((await imageOf('2026.01.01')).length);
        update.write(await imageOf('2026.01.01'));
        expect(() => update.finish()).toThrow(/ESP_ERR_OTA_SMALL_SEC_VER: the image's secure_version 0 is below the eFuse SECURE_VERSION 2/);
      } finally {
        flash.close();
      }
    } finally {
      await r.cloud.close();
    }
  });
});

describe('the tampered image of these cases', () => {
  it('is a valid app image whose signature block was made over other bytes', async () => {
    const image = await imageOf('2026.02.01');
    const signed = signImage(image, [k1]);
    expect(verifySignedImageBytes(signed, [{ digest: publicKeyDigest(k1).toString('hex') }]).ok).toBe(true);
    expect(verifySignedImageBytes(tampered(signed, image.length), [{ digest: publicKeyDigest(k1).toString('hex') }]).failure?.kind).toBe('tampered');
  });
});
