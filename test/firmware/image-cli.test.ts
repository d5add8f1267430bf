// `fleet image build | info | partitions`, run as the real command (bin/fleet.js).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAppImageBytes } from '../../firmware/image/app-image.ts';
import { xsBundleOf } from '../../firmware/image/virtual-payload.ts';

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
  it('builds the firmware into an app image whose descriptor carries the version', { timeout: 60_000 }, async () => {
    const out = join(dir, 'fw.bin');
    const r = await fleet(['image', 'build', '--version', '2026.03.01', '-o', out]);
    expect(r.stderr + r.stdout).toMatch(/fw\.bin: ESP32-S3 app image 2026\.03\.01 \(esp32-fleet\), \d+ bytes, sha256 [0-9a-f]{64}/);
    expect(r.code).toBe(0);
    const bytes = new Uint8Array(readFileSync(out));
    const check = verifyAppImageBytes(bytes, { expectedChipId: 9 });
    expect(check.ok).toBe(true);
    expect(check.appDescriptor?.version).toBe('2026.03.01');
    const s = check.segments[0]!;
    expect(xsBundleOf(bytes.subarray(s.dataOffset, s.dataOffset + s.length))).toMatch(/handleCommand/);
  });

  it('describes an image, and exits 1 naming the bootloader\'s reason when it is corrupt', { timeout: 60_000 }, async () => {
    const bundle = join(dir, 'tiny.js');
    writeFileSync(bundle, 'globalThis.handleCommand = () => ({});');
    const out = join(dir, 'tiny.bin');
    expect((await fleet(['image', 'build', '--version', '2026.04.01', '--bundle', bundle, '--project', 'tiny', '-o', out])).code).toBe(0);
    const info = await fleet(['image', 'info', out]);
    expect(info.code).toBe(0);
    expect(info.stdout).toMatch(/^tiny\.bin: ESP32-S3 app image, [\d,]+ bytes, valid$/m);
    expect(info.stdout).toMatch(/app: tiny 2026\.04\.01, built Apr  1 2026 00:00:00, ESP-IDF xs-virtual-board/);
    expect(info.stdout).toMatch(/XS bundle: 38 bytes/);
    const json = JSON.parse((await fleet(['image', 'info', '--json', out])).stdout);
    expect(json).toMatchObject({ valid: true, chipId: 9, app: { version: '2026.04.01' }, xsBundleBytes: 38 });
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

  it('is a usage error (exit 2) for a version outside YYYY.MM.bb or an unknown chip', async () => {
    expect((await fleet(['image', 'build', '--version', '1.0', '-o', join(dir, 'x.bin')])).code).toBe(2);
    expect((await fleet(['image', 'build', '--version', '2026.01.01', '--chip', 'esp8266', '-o', join(dir, 'x.bin')])).code).toBe(2);
  });
});
