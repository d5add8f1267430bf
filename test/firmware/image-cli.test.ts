// `fleet image build | info | partitions`, run as the real command (bin/fleet.js).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAppImageBytes } from '../../firmware/image/app-image.ts';
import { virtualFirmwareOf } from '../../firmware/image/virtual-payload.ts';
import { DEFAULT_VARIANT, firmwareOf } from '../../firmware/sdk-host/firmware-image.ts';

const BIN = new URL('../../bin/fleet.js', import.meta.url).pathname;
let dir: string;

function fleet(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-image-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleet image', () => {
  /** The firmware an image carries (its first segment's payload, inflated). */
  const firmwareIn = (bytes: Uint8Array) => {
    const check = verifyAppImageBytes(bytes, { expectedChipId: 9 });
    const s = check.segments[0]!;
    return { check, firmware: virtualFirmwareOf(bytes.subarray(s.dataOffset, s.dataOffset + s.length)) };
  };

  // The builds below are the controller's and the client's production builds of the default product,
  // which the suite's set-up builds ahead (tools/moddable/prebuild-virtual.ts): the command finds them cached.
  it('builds the firmware into an app image whose descriptor carries the version', { timeout: 300_000 }, async () => {
    const out = join(dir, 'fw.bin');
    const r = await fleet(['image', 'build', '--version', '2026.03.01', '-o', out]);
    expect(r.stderr + r.stdout).toMatch(/fw\.bin: ESP32-S3 app image 2026\.03\.01 \(esp32-fleet\), \d+ bytes, sha256 [0-9a-f]{64}/);
    expect(r.code).toBe(0);
    const { check, firmware } = firmwareIn(new Uint8Array(readFileSync(out)));
    expect(check.ok).toBe(true);
    expect(check.appDescriptor?.version).toBe('2026.03.01');
    // The Moddable SDK's host build of the controller (an ELF shared object), byte for byte.
    expect(Buffer.from(firmware!.subarray(0, 4)).toString('latin1')).toBe('\x7fELF');
    expect(Buffer.from(firmware!).equals(Buffer.from(await firmwareOf(DEFAULT_VARIANT)))).toBe(true);
  });

  it('builds the configuration --role, --build, --class and --product name', { timeout: 300_000 }, async () => {
    const out = join(dir, 'client.bin');
    const r = await fleet(['image', 'build', '--version', '2026.03.02', '--role', 'client', '--class', 'lamp-c3', '--build', 'production', '--product', '0x00c0ffee', '-o', out]);
    expect(r.code).toBe(0);
    const { check, firmware } = firmwareIn(new Uint8Array(readFileSync(out)));
    expect(check.ok).toBe(true);
    const client = await firmwareOf({ ...DEFAULT_VARIANT, role: 'client', hardwareClass: 'lamp-c3', ethernet: false });
    expect(Buffer.from(firmware!).equals(Buffer.from(client))).toBe(true);
    expect(Buffer.from(firmware!).equals(Buffer.from(await firmwareOf(DEFAULT_VARIANT)))).toBe(false);
  });

  it('describes an image, and exits 1 naming the bootloader\'s reason when it is corrupt', { timeout: 60_000 }, async () => {
    // --firmware: a firmware built elsewhere (any bytes: the image does not run it).
    const firmware = join(dir, 'tiny.so');
    writeFileSync(firmware, 'a stand-in for an mc.so, 38 bytes long');
    const out = join(dir, 'tiny.bin');
    expect((await fleet(['image', 'build', '--version', '2026.04.01', '--firmware', firmware, '--project', 'tiny', '-o', out])).code).toBe(0);
    expect(firmwareIn(new Uint8Array(readFileSync(out))).firmware).toEqual(new Uint8Array(readFileSync(firmware)));
    const info = await fleet(['image', 'info', out]);
    expect(info.code).toBe(0);
    expect(info.stdout).toMatch(/^tiny\.bin: ESP32-S3 app image, [\d,]+ bytes, valid$/m);
    expect(info.stdout).toMatch(/app: tiny 2026\.04\.01, built Apr  1 2026 00:00:00, ESP-IDF moddable-sdk-lin/);
    expect(info.stdout).toMatch(/virtual board firmware: 38 bytes/);
    const json = JSON.parse((await fleet(['image', 'info', '--json', out])).stdout);
    expect(json).toMatchObject({ valid: true, chipId: 9, app: { version: '2026.04.01', secureVersion: 0 }, virtualFirmwareBytes: 38 });
    // --secure-version: the descriptor's secure_version, which anti-rollback compares with the eFuse counter.
    const versioned = join(dir, 'tiny-sv3.bin');
    const built = await fleet(['image', 'build', '--version', '2026.04.01', '--firmware', firmware, '--project', 'tiny', '--secure-version', '3', '-o', versioned]);
    expect(built.stdout).toMatch(/ app image 2026\.04\.01 \(tiny, secure_version 3\), /);
    expect((await fleet(['image', 'info', versioned])).stdout).toMatch(/app: tiny 2026\.04\.01, built .*, secure version 3$/m);
    const corrupt = readFileSync(out);
    corrupt[corrupt.length - 40] = corrupt[corrupt.length - 40]! ^ 0xff; // inside the last segment
    writeFileSync(out, corrupt);
    const bad = await fleet(['image', 'info', out]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/INVALID/);
    expect(bad.stdout).toMatch(/problem: esp_image: Image hash failed - image is corrupt/);
  });

  it('compiles firmware/partitions.csv to the 0xC00-byte binary table', async () => {
    const out = join(dir, 'partitions.bin');
    const r = await fleet(['image', 'partitions', '-o', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^storage +data +littlefs +0x610000 0x1f0000$/m);
    expect(readFileSync(out).length).toBe(0xc00);
  });

  it('is a usage error (exit 2) for a version outside YYYY.MM.bb, an unknown chip or role, a product id that is not 0x and 8 hexadecimal digits, or a secure version outside 0 to 16', async () => {
    expect((await fleet(['image', 'build', '--version', '1.0', '-o', join(dir, 'x.bin')])).code).toBe(2);
    expect((await fleet(['image', 'build', '--version', '2026.01.01', '--chip', 'esp8266', '-o', join(dir, 'x.bin')])).code).toBe(2);
    expect((await fleet(['image', 'build', '--version', '2026.01.01', '--role', 'lamp', '-o', join(dir, 'x.bin')])).code).toBe(2);
    expect((await fleet(['image', 'build', '--version', '2026.01.01', '--product', 'c0ffee', '-o', join(dir, 'x.bin')])).code).toBe(2);
    for (const sv of ['17', '-1', 'two']) {
      const r = await fleet(['image', 'build', '--version', '2026.01.01', '--secure-version', sv, '-o', join(dir, 'x.bin')]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/must be a whole number from 0 to 16/);
    }
  });
});
