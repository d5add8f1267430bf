// The two update outcomes the chip's security decides (firmware/src/core/health/outcomes.ts), caused on
// virtual boards running the firmware the Moddable SDK builds for the host and reported by the board
// itself to the real cloud (docs/device-health.md, "update"): an image whose signature the running
// image's key does not verify ends `failed: signature_invalid`, one whose secure_version is below the
// eFuse counter ends `failed: secure_version_too_low`. The refusals themselves (the console, the boot
// slot, the eFuses): sdk-board-ota-signed.test.ts; the other outcomes: sdk-board-update-outcomes.test.ts.
import { execFileSync } from 'node:child_process';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHIPS } from '../../firmware/image/chips.ts';
import { signImage } from '../../firmware/image/secure-boot.ts';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import { Efuses, manifestHmacKeyBlock } from '../../firmware/virtual-esp32/efuse.ts';
import { DEFAULT_FLASH_BYTES, firmwareImage, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import { FlashImage } from '../../firmware/virtual-esp32/flash-image.ts';
import { OtaSlots } from '../../firmware/virtual-esp32/ota-slots.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { startTestCloud } from '../helpers/cloud.ts';

const TRACK = '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3';
const PASSWORD = 'outcome-admin-password';
let dir: string;
let k1: KeyObject;

const identity = (n: number): DeviceIdentity => {
  const i = n.toString(16).padStart(2, '0');
  return { uuid: `ctl-outcome-${i}`, role: 'controller', ethernetMac: `24:0A:C4:E6:00:${i}`, wifiMac: `24:0A:C4:16:00:${i}`, hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' };
};
const imageOf = (version: string, secureVersion = 0) =>
  firmwareImage(version, { variant: variantOf({ role: 'controller', hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', build: 'production', ethernetMac: '24:0A:C4:E6:00:00' }), secureVersion });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-ota-outcomes-'));
  const pem = join(dir, 'k1.pem');
  execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:3072', '-out', pem], { stdio: 'pipe' });
  k1 = createPrivateKey(readFileSync(pem));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A board on its own flash and eFuses, its own cloud; the flash takes no time (nothing here measures it). */
async function rig(n: number, o: { antiRollback?: boolean } = {}) {
  const id = identity(n);
  const efuses = new Efuses({ macAddress: id.wifiMac, hmacKey: Buffer.from('44'.repeat(32), 'hex'), hmacKeyBlock: manifestHmacKeyBlock() });
  const flashDir = join(dir, `board-${n}`);
  const cloud = await startTestCloud();
  const start = () => startSdkBoard({ identity: id, efuses, flashDir, adminPassword: PASSWORD, flashTiming: 'off', panel: false, ...(o.antiRollback ? { antiRollback: true } : {}) });
  const enroll = async (b: SdkBoard) => {
    const key = JSON.parse((await b.typeLine('pubkey')).slice(3)).public_key_pem as string;
    expect((await cloud.admin('PUT', `/admin/devices/${id.uuid}`, { public_key: key })).status).toBe(201);
    expect(await b.typeLine(`cloud ${cloud.url}`)).toMatch(/^OK /);
  };
  const release = async (version: string, image: Uint8Array) => {
    const up = await fetch(`${cloud.url}${TRACK}/${version}/image`, { method: 'PUT', headers: { authorization: `Bearer ${await cloud.token()}`, 'content-type': 'application/octet-stream' }, body: image });
    expect(up.status).toBe(201);
  };
  /** The virtual chip's esp_ota_ops on the board's flash while it is off: the image in ota_1, selected. */
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
  /** The end of the board's update to `version` as the cloud has it from the board (what `fleet device health` shows). */
  const endOf = async (version: string): Promise<Record<string, any>> => {
    let end: Record<string, any> | undefined;
    await expect
      .poll(
        async () => {
          const t = await cloud.adminJson('GET', `/admin/devices/${id.uuid}/health?limit=50`);
          end = (t.body.reports as { report: Record<string, any> }[]).map((r) => r.report).find((r) => r.kind === 'update' && r.version === version && (r.outcome === 'failed' || r.outcome === 'succeeded'));
          return end !== undefined;
        },
        { timeout: 60_000, interval: 100 },
      )
      .toBe(true);
    return end!;
  };
  return { cloud, start, enroll, release, installWhileOff, endOf };
}

/** `ota check`, once more when the virtual network's download gave up under load (not these cases' concern). */
async function otaCheck(b: SdkBoard): Promise<string> {
  const answer = await b.typeLine('ota check');
  return answer.startsWith('ERR download_failed ') ? b.typeLine('ota check') : answer;
}

describe('the update outcomes the chip security decides, reported by the board', () => {
  it("an image the running image's key does not verify: failed, signature_invalid", { timeout: 300_000 }, async () => {
    const r = await rig(1);
    try {
      const first = await r.start();
      await r.enroll(first);
      await first.close();
      // The running image signed (secure boot off): its own key decides (docs/secure-boot.md).
      r.installWhileOff(signImage(await imageOf('2026.02.01'), [k1]));
      const board = await r.start();
      try {
        expect(board.identity.firmwareVersion).toBe('2026.02.01');
        await r.release('2026.03.01', await imageOf('2026.03.01'));
        expect(await otaCheck(board)).toMatch(/^ERR signature_invalid /);
        const end = await r.endOf('2026.03.01');
        expect(end).toMatchObject({ kind: 'update', version: '2026.03.01', outcome: 'failed', reason: 'signature_invalid', fw: '2026.02.01' });
        expect(end.detail).toMatch(/Secure Boot V2 verification failed \(unsigned\)/);
      } finally {
        await board.close();
      }
    } finally {
      await r.cloud.close();
    }
  });

  it('an image whose secure_version is below the eFuse counter: failed, secure_version_too_low', { timeout: 300_000 }, async () => {
    const r = await rig(2, { antiRollback: true });
    try {
      const board = await r.start();
      try {
        await r.enroll(board);
        await r.release('2026.02.01', await imageOf('2026.02.01', 2));
        expect(await otaCheck(board)).toMatch(/^OK \{"kind":"installed","version":"2026\.02\.01"/);
        expect(await r.endOf('2026.02.01')).toMatchObject({ outcome: 'succeeded', fw: '2026.02.01' });
        await r.release('2026.03.01', await imageOf('2026.03.01', 1));
        expect(await otaCheck(board)).toMatch(/^ERR secure_version_too_low /);
        const end = await r.endOf('2026.03.01');
        expect(end).toMatchObject({ kind: 'update', version: '2026.03.01', outcome: 'failed', reason: 'secure_version_too_low', fw: '2026.02.01' });
        expect(end.detail).toContain("the image's secure_version 1 is below the eFuse SECURE_VERSION 2");
      } finally {
        await board.close();
      }
    } finally {
      await r.cloud.close();
    }
  });
});
