// The firmware built by the real Moddable SDK (docs/moddable-build.md): its host tools from the
// project's cache, mcconfig for the ESP32-S3 on both manifests, then TypeScript, xsc, xsl (the
// preloaded, linked archive mc.xs.c) and mcrez. When the SDK cannot be found these tests fail with the
// reason: a build test that passes without the SDK would test nothing.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFirmware, figureLines, FirmwareBuildError, MANIFESTS, type FirmwareBuild } from '../../firmware/toolchain/firmware-build.ts';
import { makeList } from '../../firmware/toolchain/makefile.ts';
import { ensureSdkTools, locateSdk, HOST_FIRMWARE_PREREQUISITES, missingPrerequisites, SdkSetupError, SHARED_SDK, type SdkTools } from '../../firmware/toolchain/sdk.ts';

const FIXTURE = resolve('test/fixtures/moddable-app');
const out = mkdtempSync(join(tmpdir(), 'sdk-build-'));
let tools: SdkTools;

beforeAll(async () => {
  // The first run on a machine builds the SDK's tools into .cache/ (about a minute here, four on a
  // slow machine); .ci/run does it before the tests.
  tools = await ensureSdkTools();
}, 20 * 60_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

const fixture = (manifest: string) => buildFirmware({ manifest: join(FIXTURE, manifest), variant: manifest, outDir: join(out, manifest), tools, clean: true });

describe('the firmware built by the Moddable SDK for esp32/esp32s3', () => {
  const builds: Partial<Record<keyof typeof MANIFESTS, FirmwareBuild>> = {};

  for (const variant of Object.keys(MANIFESTS) as (keyof typeof MANIFESTS)[]) {
    it(`links ${variant} (${MANIFESTS[variant].split('/').pop()}) through xsl and mcrez, afresh`, async () => {
      const started = Date.now();
      const build = await buildFirmware({ manifest: MANIFESTS[variant], variant, outDir: join(out, variant), tools, clean: true });
      builds[variant] = build;
      expect(build.stages.map((s) => s.name)).toEqual(['mcconfig', 'compile', 'xsl', 'mcrez']);
      for (const file of [build.xsC, build.resourcesC]) expect(statSync(file).mtimeMs).toBeGreaterThanOrEqual(started - 1000);
      // Every TypeScript module of the firmware went through the SDK's tsc and xsc.
      expect(build.stages[1]!.detail).toMatch(/^tsc [1-9]\d*, xsc [1-9]\d*/);
      // The archive holds the machine's creation exactly as the manifest asks (esp32s3's heaps).
      expect(readFileSync(build.xsC, 'utf8')).toContain('{ 78848, 0, 4928, 0, 512,');
      // xsl's preload check: nothing of the firmware's own is left writable (the build refuses that).
      expect(build.xsl.warnings.every((w) => w.module.startsWith('ssl/'))).toBe(true);
      expect(build.archive.scripts).toBeGreaterThan(build.preloaded);
      expect(build.resourcesBytes).toBeGreaterThan(statSync(resolve('firmware/src/platform/moddable/font/oled-6x8.bits')).size);
      expect(build.archive.bytes + build.resourcesBytes).toBeLessThan(build.appSlotBytes);
      // mc/config: the debug manifest's config wins over the production one it includes.
      expect(readFileSync(join(build.tmpDir, 'mc.config.js'), 'utf8')).toContain(`"build": "${variant}",`);
    }, 10 * 60_000);
  }

  it('preloads every module the manifest preloads, under the names the firmware imports', () => {
    const build = builds.production;
    expect(build, 'the production build ran').toBeDefined();
    const makefile = readFileSync(join(build!.tmpDir, 'makefile'), 'utf8');
    const preloads = new Set(makeList(makefile, 'PRELOADS').map((p) => p.replace(/^-p /, '').replace(/\.xsb$/, '')));
    const manifest = JSON.parse(readFileSync(MANIFESTS.production, 'utf8')) as { preload: string[] };
    for (const name of manifest.preload) expect(preloads, name).toContain(name);
    expect(preloads).toContain('modules'); // hal/board.ts imports it: the SDK's module, now in the manifest
  });

  it('prints one figure line per manifest and the app slot headroom', () => {
    const build = builds.debug;
    expect(build, 'the debug build ran').toBeDefined();
    const [figures, fit] = figureLines(build!);
    expect(figures).toMatch(/^firmware build: manifest=debug modules=\d+ preloaded=\d+ xs_archive_bytes=\d+ resources_bytes=\d+ seconds=\d+\.\d$/);
    expect(fit).toMatch(/^firmware fit: manifest=debug app_slot_bytes=3145728 xs_archive_and_resources_bytes=\d+ headroom_bytes=\d+ /);
  });
});

describe('what the build refuses (a two-module app, same tools)', () => {
  it('builds the app itself', async () => {
    const build = await fixture('manifest.json');
    expect(build.archive.scripts).toBeGreaterThan(2);
    expect(existsSync(build.xsC)).toBe(true);
  }, 5 * 60_000);

  it('a module imported but provided by no manifest: xsl fails and the error names it', async () => {
    const err = await fixture('manifest_unprovided_import.json').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FirmwareBuildError);
    expect((err as FirmwareBuildError).stage).toBe('xsl');
    expect((err as Error).message).toContain('ReferenceError: module "modules" not found');
  }, 5 * 60_000);

  it('a module the manifest names whose file does not exist', async () => {
    const err = await fixture('manifest_missing_file.json').catch((e: unknown) => e);
    expect((err as FirmwareBuildError).stage).toBe('mcconfig');
    expect((err as Error).message).toMatch(/module "ghost": .*moddable-app\/ghost .* does not exist/);
  }, 5 * 60_000);

  it('a preload name that matches no module', async () => {
    const err = await fixture('manifest_missing_preload.json').catch((e: unknown) => e);
    expect((err as Error).message).toContain('preload "ghost" names no module of the build');
  }, 5 * 60_000);

  it('module-level state in a preloaded module of ours (xsl: not frozen)', async () => {
    const err = await fixture('manifest_module_state.json').catch((e: unknown) => e);
    expect((err as FirmwareBuildError).stage).toBe('xsl');
    expect((err as Error).message).toContain('module-state: remember() seen: not frozen');
  }, 5 * 60_000);

  it('a RegExp made at module level in a preloaded module (XS 8.2.3 corrupts memory running one)', async () => {
    const err = await fixture('manifest_module_regexp.json').catch((e: unknown) => e);
    expect((err as FirmwareBuildError).stage).toBe('xsl');
    expect((err as Error).message).toMatch(/the archive holds 1 RegExp objects made at module level in preloaded modules: .*docs\/moddable-regexp\.md/);
  }, 5 * 60_000);
});

describe('finding the SDK and what its tools need', () => {
  it('takes $MODDABLE, as the SDK\'s own tools do, with its version and commit', () => {
    // The SDK this run found (through $MODDABLE, or ../shared/moddable-sdk when that is not set).
    const root = tools.source.root;
    const sdk = locateSdk({ PATH: process.env.PATH, MODDABLE: root }, '/nonexistent/shared/moddable-sdk');
    expect(sdk).toMatchObject({ root, from: 'MODDABLE', version: '8.2.3' });
    expect(sdk.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(tools.source.commit).toBe(sdk.commit);
    expect(tools.moddable).toContain(`moddable-8.2.3-${sdk.commit.slice(0, 12)}`);
  });

  it('without $MODDABLE, falls back to ../shared/moddable-sdk when it is there', () => {
    expect(SHARED_SDK).toBe(resolve('..', 'shared', 'moddable-sdk'));
    const sdk = locateSdk({ PATH: process.env.PATH }, tools.source.root);
    expect(sdk).toMatchObject({ root: tools.source.root, from: '../shared/moddable-sdk', version: '8.2.3', commit: tools.source.commit });
  });

  it('with neither, says which variable to set', () => {
    expect(() => locateSdk({ PATH: process.env.PATH }, '/nonexistent/shared/moddable-sdk')).toThrow(
      'The Moddable SDK was not found: set MODDABLE to the root of a Moddable SDK 8.2.3 checkout (as the SDK\'s own tools expect), or put one at /nonexistent/shared/moddable-sdk',
    );
  });

  it('refuses a MODDABLE that is relative, missing or not an SDK, saying so', () => {
    expect(() => locateSdk({ MODDABLE: 'moddable' })).toThrow(/absolute path/);
    expect(() => locateSdk({ MODDABLE: '/nonexistent/moddable' })).toThrow(/does not exist/);
    expect(() => locateSdk({ MODDABLE: tmpdir() })).toThrow(/is not a Moddable SDK: tools\/mcconfig\.js/);
  });

  it('names the Debian package of each missing prerequisite', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'sdk-bin-'));
    try {
      expect((await missingPrerequisites({ PATH: bin })).map((p) => p.install).join(' ')).toMatch(/install Debian's make .* install Debian's gcc .* install Debian's pkg-config/);
      // make, cc and a pkg-config that knows no GLib: only libglib2.0-dev is missing.
      for (const [name, body] of [['make', 'exit 0'], ['cc', 'exit 0'], ['pkg-config', 'exit 1']]) {
        writeFileSync(join(bin, name!), `#!/bin/sh\n${body}\n`);
        chmodSync(join(bin, name!), 0o755);
      }
      const missing = await missingPrerequisites({ PATH: `${bin}:/bin:/usr/bin` });
      expect(missing.map((p) => p.install)).toEqual([expect.stringContaining('libglib2.0-dev (apt-get install -y libglib2.0-dev)')]);
      // The virtual boards' firmware: mbedTLS and libcrypto, here; a header that is not there is named.
      expect(await missingPrerequisites(process.env, HOST_FIRMWARE_PREREQUISITES)).toEqual([]);
      const noMbedtls = [{ ...HOST_FIRMWARE_PREREQUISITES[0]!, check: { file: join(bin, 'mbedtls', 'version.h') } }];
      expect((await missingPrerequisites(process.env, noMbedtls)).map((p) => p.install)).toEqual([expect.stringContaining('libmbedtls-dev (apt-get install -y libmbedtls-dev)')]);
      const cache = mkdtempSync(join(tmpdir(), 'sdk-cache-'));
      await expect(ensureSdkTools({ env: { PATH: `${bin}:/bin:/usr/bin` }, cacheRoot: cache })).rejects.toThrow(SdkSetupError);
      rmSync(cache, { recursive: true, force: true });
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('npm run build:firmware exits 4 with one sentence when the SDK is not there', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'tools/moddable/build-firmware.ts'], { env: { ...process.env, MODDABLE: '/nonexistent/moddable' } });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(code).toBe(4);
    expect(text.trim()).toBe('build:firmware: MODDABLE=/nonexistent/moddable does not exist: point it at a Moddable SDK 8.2.3 checkout');
  }, 60_000);
});
