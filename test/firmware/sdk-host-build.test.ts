// The virtual board's firmware: the product's manifest built by the Moddable SDK for the Linux host
// (firmware/sdk-host/build.ts), and the loader that runs it. What a board does with it:
// sdk-board*.test.ts.
import { execFileSync, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { hostFirmware, variantConfig } from '../../firmware/sdk-host/build.ts';
import { DEFAULT_VARIANT } from '../../firmware/sdk-host/firmware-image.ts';

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('the host build of the firmware', () => {
  it("a variant is the manifest's config: role, hardware class, product, build, Ethernet, and only the settings it sets", () => {
    expect(variantConfig(DEFAULT_VARIANT)).toEqual({ role: 'controller', hardware_class: 'ctl-s3', product_hex: '0x00c0ffee', build: 'production', ethernet: true });
    const client = variantConfig({ ...DEFAULT_VARIANT, role: 'client', ethernet: false, build: 'debug', settings: { resultDisplayMs: 1500 } });
    expect(client).toMatchObject({ role: 'client', ethernet: false, build: 'debug', settings: { resultDisplayMs: 1500 } });
  });

  it('builds an mc.so the loader can run, kept under its key (a second ask builds nothing)', async () => {
    const first = await hostFirmware(DEFAULT_VARIANT);
    const symbols = execFileSync('nm', ['-D', '--defined-only', first.firmware], { encoding: 'utf8' });
    for (const name of ['fxScreenLaunch', 'fwHostAttach', 'fwHostAbortReason', 'fwHostBeforeExit']) expect(symbols).toMatch(new RegExp(`\\b${name}\\b`));
    const t0 = performance.now();
    const again = await hostFirmware({ ...DEFAULT_VARIANT });
    expect(again).toEqual(first);
    expect(performance.now() - t0).toBeLessThan(5_000); // no build: a cached file (generous; a build takes a minute)
  }, 15 * 60_000);

  it('the loader refuses what is not a virtual board firmware, and a missing file, with exit 2 and why', async () => {
    const { loader } = await hostFirmware(DEFAULT_VARIANT);
    const libm = execFileSync('sh', ['-c', 'ls /lib/x86_64-linux-gnu/libm.so.6 /usr/lib/x86_64-linux-gnu/libm.so.6 2>/dev/null | head -1'], { encoding: 'utf8' }).trim();
    const notFirmware = await run(loader, [libm]);
    expect(notFirmware.code).toBe(2);
    expect(notFirmware.output).toContain("is not a virtual board's firmware (fxScreenLaunch, fwHostAttach)");
    const missing = await run(loader, ['/nonexistent/mc.so']);
    expect(missing.code).toBe(2);
    expect(missing.output).toMatch(/loader: .*nonexistent\/mc\.so/);
    const usage = await run(loader, []);
    expect(usage.code).toBe(2);
    expect(usage.output).toContain('usage: loader <mc.so>');
  }, 15 * 60_000);

  it('a firmware with no chip beneath it (no channel) ends at its first call: exit 70, the chip is gone', async () => {
    const { loader, firmware } = await hostFirmware(DEFAULT_VARIANT);
    const r = await run(loader, [firmware]);
    expect(r.code).toBe(70);
  }, 15 * 60_000);
});
