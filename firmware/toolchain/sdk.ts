// The Moddable SDK's host tools (xsc, xsid, xsl, mcconfig, mcrez), built once into a cache of the
// project's (docs/moddable-build.md). The SDK is found as Moddable's own tools find it, through
// $MODDABLE (the root of an SDK checkout); when that is not set, ../shared/moddable-sdk beside the
// repository when it is there. It is copied to .cache/moddable-<version>-<commit>/ and built there,
// because its makefiles write into the SDK's own build/ folder, which may be read-only. Not built: xsbug
// and mcsim (GTK 3, not needed to build firmware), serial2xsbug.
//
//   npx tsx firmware/toolchain/sdk.ts          builds the tools if the cache lacks them; prints where they are
// Exit codes: 0 ready, 1 the SDK's tools failed to build, 4 a prerequisite or the SDK is missing.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runStep, tail } from './process.ts';
import { locateSdk, SdkSetupError, type SdkSource } from './sdk-location.ts';

// Where the SDK is found lives below the tools, for the harness too (firmware/toolchain/sdk-location.ts).
export { locateSdk, SdkSetupError, SHARED_SDK, sdkIdentity, type SdkSource } from './sdk-location.ts';

export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** The tools a firmware build needs, in `build/bin/lin/release` of the SDK copy. */
export const SDK_TOOLS = ['xsc', 'xsid', 'xsl', 'mcconfig', 'mcrez'] as const;

/** A step of the SDK's own build failed; the message carries the end of its output. */
export class SdkBuildError extends Error {
  override name = 'SdkBuildError';
  readonly exitCode = 1;
}

export interface SdkTools {
  source: SdkSource;
  /** MODDABLE for the build: the copy in the cache. */
  moddable: string;
  /** Where xsc, xsl, mcconfig and mcrez are. */
  bin: string;
  /** True when this call built them (the cache was empty or stale). */
  built: boolean;
  /** How long building them took (0 when they were already there). */
  seconds: number;
}


export interface Prerequisite {
  what: string;
  /** How to look for it: a command on PATH, a pkg-config package, or a file (a header). */
  check: { command: string } | { pkgConfig: string } | { file: string };
  /** The one sentence a user reads when it is missing. */
  install: string;
}

export const PREREQUISITES: readonly Prerequisite[] = [
  { what: 'make', check: { command: 'make' }, install: "The Moddable SDK's tools are built with make: install Debian's make (apt-get install -y make)." },
  { what: 'a C compiler', check: { command: 'cc' }, install: "The Moddable SDK's tools are C programs: install Debian's gcc (apt-get install -y gcc)." },
  { what: 'pkg-config', check: { command: 'pkg-config' }, install: "The Moddable SDK's tools find GLib with pkg-config: install Debian's pkg-config (apt-get install -y pkg-config)." },
  { what: 'GLib (gio-2.0)', check: { pkgConfig: 'gio-2.0' }, install: "The Moddable SDK's mcconfig and mcrez need GLib's development files: install Debian's libglib2.0-dev (apt-get install -y libglib2.0-dev)." },
];

/** What the virtual boards' firmware (the SDK's build for Linux, firmware/sdk-host/) links besides GLib. */
export const HOST_FIRMWARE_PREREQUISITES: readonly Prerequisite[] = [
  { what: 'mbedTLS', check: { file: '/usr/include/mbedtls/version.h' }, install: "The virtual boards' firmware links mbedTLS's crypto (the SDK's TLS on Linux): install Debian's libmbedtls-dev (apt-get install -y libmbedtls-dev)." },
  { what: 'OpenSSL (libcrypto)', check: { pkgConfig: 'libcrypto' }, install: "The virtual boards' firmware links OpenSSL's libcrypto (AES-GCM beneath the chip's crypto): install Debian's libssl-dev (apt-get install -y libssl-dev)." },
];

/** The prerequisites that are missing, first the ones the others depend on. */
export async function missingPrerequisites(env: NodeJS.ProcessEnv = process.env, list: readonly Prerequisite[] = PREREQUISITES): Promise<Prerequisite[]> {
  const missing: Prerequisite[] = [];
  for (const p of list) {
    if ('command' in p.check) {
      if (!onPath(p.check.command, env)) missing.push(p);
    } else if ('file' in p.check) {
      if (!existsSync(p.check.file)) missing.push(p);
    } else if (!missing.some((m) => m.what === 'pkg-config')) {
      const r = await runStep('pkg-config', ['--exists', p.check.pkgConfig], { env }).catch(() => ({ code: 1 }));
      if (r.code !== 0) missing.push(p);
    }
  }
  return missing;
}

export function onPath(command: string, env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, command)));
}

/** The cache folder for one SDK: keyed by its version and commit, so another SDK never reuses it. */
export function cacheFolder(source: SdkSource, cacheRoot = join(REPO_ROOT, '.cache')): string {
  return join(cacheRoot, `moddable-${source.version.replace(/[^A-Za-z0-9._-]/g, '_')}-${source.commit.slice(0, 12)}`);
}

interface Marker {
  version: string;
  commit: string;
  from: string;
  tools: readonly string[];
  seconds: number;
  builtAt: string;
}

function toolsPresent(bin: string): boolean {
  return SDK_TOOLS.every((t) => existsSync(join(bin, t)));
}

/**
 * The SDK's host tools, built into the cache when they are not there yet. A second caller (another
 * test worker, a second terminal) waits for the first one's build instead of building beside it.
 */
export async function ensureSdkTools(options: { env?: NodeJS.ProcessEnv; cacheRoot?: string; log?: (line: string) => void } = {}): Promise<SdkTools> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => {});
  const source = locateSdk(env);
  const folder = cacheFolder(source, options.cacheRoot);
  const moddable = join(folder, 'moddable');
  const bin = join(moddable, 'build', 'bin', 'lin', 'release');
  const markerPath = join(folder, 'tools.json');
  const ready = () => existsSync(markerPath) && toolsPresent(bin);
  if (ready()) return { source, moddable, bin, built: false, seconds: 0 };

  const missing = await missingPrerequisites(env);
  if (missing.length > 0) throw new SdkSetupError(missing.map((m) => m.install).join(' '));

  mkdirSync(folder, { recursive: true });
  const release = await takeLock(join(folder, 'lock'), log);
  try {
    if (ready()) return { source, moddable, bin, built: false, seconds: 0 };
    const started = performance.now();
    // A copy left by a build that was cut off is thrown away: the makefiles' state in it is unknown.
    rmSync(moddable, { recursive: true, force: true });
    log(`moddable sdk: copying ${source.root} (${source.version}, ${source.commit.slice(0, 12)}) to ${moddable}`);
    await must('copy the SDK', runStep('cp', ['-R', source.root, moddable], { env }));
    await must('make the copy writable', runStep('chmod', ['-R', 'u+w', moddable], { env }));
    const buildEnv = { ...env, MODDABLE: moddable, XS_DIR: join(moddable, 'xs'), BUILD_DIR: join(moddable, 'build') };
    const makefiles = join(moddable, 'build', 'makefiles', 'lin');
    // The first lines of the SDK's own `release` target (build/makefiles/lin/makefile), without
    // serial2xsbug, xsbug and mcsim; GOAL=release as that target sets it.
    for (const [name, file] of [
      ['xsc', join(moddable, 'xs', 'makefiles', 'lin', 'xsc.mk')],
      ['xsid', join(moddable, 'xs', 'makefiles', 'lin', 'xsid.mk')],
      ['xsl', join(moddable, 'xs', 'makefiles', 'lin', 'xsl.mk')],
      ['mcconfig, mcrez and the other tools', join(makefiles, 'tools.mk')],
    ] as const) {
      log(`moddable sdk: building ${name}`);
      await must(`build ${name}`, runStep('make', ['GOAL=release', '-j2', '-f', file], { cwd: makefiles, env: buildEnv }));
    }
    if (!toolsPresent(bin)) throw new SdkBuildError(`the SDK's build finished but ${SDK_TOOLS.filter((t) => !existsSync(join(bin, t))).join(', ')} is missing from ${bin}`);
    const seconds = (performance.now() - started) / 1000;
    const marker: Marker = { version: source.version, commit: source.commit, from: source.root, tools: SDK_TOOLS, seconds: round1(seconds), builtAt: new Date().toISOString() };
    writeFileSync(markerPath, `${JSON.stringify(marker, null, 2)}\n`);
    return { source, moddable, bin, built: true, seconds };
  } finally {
    release();
  }
}

async function must(what: string, step: Promise<{ code: number; output: string }>): Promise<void> {
  const r = await step;
  if (r.code !== 0) throw new SdkBuildError(`could not ${what} (exit ${r.code}):\n${tail(r.output)}`);
}

/** A lock folder holding the owner's PID; a lock whose owner is gone is taken over. */
export async function takeLock(path: string, log: (line: string) => void, timeoutMs = 15 * 60_000): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  let said = false;
  for (;;) {
    try {
      mkdirSync(path);
      writeFileSync(join(path, 'pid'), String(process.pid));
      return () => rmSync(path, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number(readFileSafe(join(path, 'pid')));
    if (Number.isInteger(owner) && owner > 0 && !alive(owner)) {
      rmSync(path, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new SdkBuildError(`another build (PID ${owner}) has held ${path} for ${timeoutMs / 60_000} minutes`);
    if (!said) log(`moddable sdk: waiting for the build of PID ${owner}`);
    said = true;
    await new Promise((r) => setTimeout(r, 500));
  }
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const round1 = (n: number) => Math.round(n * 10) / 10;

async function main(): Promise<void> {
  try {
    const tools = await ensureSdkTools({ log: (line) => console.log(line) });
    console.log(
      tools.built
        ? `moddable sdk: ${tools.source.version} tools built in ${round1(tools.seconds)} s at ${tools.bin}`
        : `moddable sdk: ${tools.source.version} tools ready at ${tools.bin}`,
    );
  } catch (err) {
    console.error(`moddable sdk: ${(err as Error).message}`);
    process.exitCode = (err as { exitCode?: number }).exitCode ?? 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
