// The firmware of virtual boards, built by the Moddable SDK for the Linux host (docs/moddable-emulation.md):
// the product's manifest (firmware/src/platform/moddable/manifest.json, whose platforms.lin adds
// ./manifest.json) through the SDK's own mcconfig and its makefile's `build` target, into an mc.so
// that loader.c runs. A board's build configuration (role, hardware class, debug or production, the
// rig's build settings, listener limits) is compiled into mc/config as on a chip, so each one is a
// build of its own: they share one output folder, where switching from one to another relinks only
// (mc/config, xsl, mc.xs.c), and each mc.so is kept under the hash of its configuration and of the
// sources it was built from.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FirmwareBuildError, NO_LAUNCH } from '../toolchain/firmware-build.ts';
import { ruleDigest } from '../toolchain/makefile.ts';
import { PRELOADED_REGEXP_PROBLEM, preloadedRegExps } from '../toolchain/xs-archive.ts';
import { runStep, tail } from '../toolchain/process.ts';
import { ensureSdkTools, HOST_FIRMWARE_PREREQUISITES, missingPrerequisites, REPO_ROOT, takeLock, type SdkTools } from '../toolchain/sdk.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));
export const PRODUCT_MANIFEST = join(REPO_ROOT, 'firmware/src/platform/moddable/manifest.json');
/** What a virtual board's firmware is built from: a change here is a new build. */
const SOURCE_FOLDERS = ['firmware/src', 'firmware/image', 'firmware/sdk-host'].map((f) => join(REPO_ROOT, f));

/** A board's build configuration: the manifest's "config" that differs from one board to another. */
export interface HostVariant {
  build: 'production' | 'debug';
  role: 'controller' | 'client';
  hardwareClass: string;
  productHex: string;
  /** A controller with its W5500. */
  ethernet: boolean;
  /** Listener limits (config "http"). */
  http?: Record<string, number>;
  /** Build settings (config "settings", core/settings.ts). */
  settings?: Record<string, number>;
}

export interface HostFirmware {
  /** The stripped mc.so. */
  firmware: string;
  loader: string;
  /** The hash it is kept under. */
  key: string;
}

/** mc/config of a variant, as mcconfig writes it from the manifest. */
export function variantConfig(v: HostVariant): Record<string, unknown> {
  return {
    role: v.role,
    hardware_class: v.hardwareClass,
    product_hex: v.productHex,
    build: v.build,
    ethernet: v.ethernet,
    ...(v.http && Object.keys(v.http).length > 0 ? { http: v.http } : {}),
    ...(v.settings && Object.keys(v.settings).length > 0 ? { settings: v.settings } : {}),
  };
}

function sourcesDigest(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path);
      else if (/\.(ts|js|c|h|json|bits|bmf|csv)$/.test(name)) hash.update(path).update('\0').update(readFileSync(path));
    }
  };
  for (const folder of SOURCE_FOLDERS) walk(folder);
  return hash.digest('hex');
}

const built = new Map<string, Promise<HostFirmware>>();
let loaderBuilt: Promise<string> | undefined;

/** The folder of this SDK's host builds (beside its tools, in the project's cache). */
function buildRoot(tools: SdkTools): string {
  return join(tools.moddable, '..', 'virtual-esp32');
}

/**
 * The loader, compiled once per SDK copy and loader.c (it includes the SDK's screen.h): kept beside
 * the SHA-256 of the source it was compiled from, so a checkout of another loader.c builds it again
 * whatever the files' times say.
 */
async function ensureLoader(tools: SdkTools, env: NodeJS.ProcessEnv): Promise<string> {
  const root = buildRoot(tools);
  const source = join(HERE, 'loader.c');
  const loader = join(root, 'loader');
  const stamp = `${loader}.sha256`;
  const digest = createHash('sha256').update(readFileSync(source)).digest('hex');
  if (existsSync(loader) && existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) return loader;
  mkdirSync(root, { recursive: true });
  const glib = await runStep('pkg-config', ['--cflags', '--libs', 'glib-2.0'], { env });
  if (glib.code !== 0) throw new FirmwareBuildError('loader', `pkg-config glib-2.0 failed: ${glib.output.trim()}`);
  const temporary = `${loader}.${process.pid}`;
  const r = await runStep(
    'cc',
    ['-O2', '-Wall', '-DmxLinux=1', `-I${join(tools.moddable, 'build/simulators/modules')}`, `-I${join(tools.moddable, 'xs/includes')}`, `-I${join(tools.moddable, 'xs/platforms')}`, source, ...glib.output.trim().split(/\s+/), '-ldl', '-o', temporary],
    { env },
  );
  if (r.code !== 0) throw new FirmwareBuildError('loader', `the loader did not compile:\n${tail(r.output)}`);
  renameSync(temporary, loader);
  writeFileSync(stamp, digest);
  return loader;
}

/**
 * The mc.so of a variant, built when this SDK, these sources and this configuration have none yet.
 * Builds run one at a time (a lock in the cache): tests that start boards of several variants at once
 * wait for each other's builds.
 */
export function hostFirmware(variant: HostVariant, o: { log?: (line: string) => void } = {}): Promise<HostFirmware> {
  const config = variantConfig(variant);
  const id = JSON.stringify(config);
  let promise = built.get(id);
  if (!promise) {
    promise = buildVariant(config, o.log ?? (() => {}));
    built.set(id, promise);
    promise.catch(() => built.delete(id));
  }
  return promise;
}

async function buildVariant(config: Record<string, unknown>, log: (line: string) => void): Promise<HostFirmware> {
  const tools = await ensureSdkTools({ log });
  const missing = await missingPrerequisites(process.env, HOST_FIRMWARE_PREREQUISITES);
  if (missing.length > 0) throw new FirmwareBuildError('prerequisites', missing.map((p) => p.install).join('\n'));
  const env: NodeJS.ProcessEnv = { ...process.env, MODDABLE: tools.moddable, PATH: [tools.bin, join(REPO_ROOT, 'node_modules', '.bin'), process.env.PATH ?? ''].join(':') };
  delete env.IDF_PATH;
  const loaderPromise = (loaderBuilt ??= ensureLoader(tools, env));
  loaderPromise.catch(() => (loaderBuilt = undefined));
  const loader = await loaderPromise;
  const root = buildRoot(tools);
  const key = createHash('sha256').update(tools.source.commit).update(sourcesDigest()).update(JSON.stringify(config)).digest('hex').slice(0, 20);
  const firmware = join(root, 'firmware', `${key}.so`);
  if (existsSync(firmware)) return { firmware, loader, key };

  mkdirSync(join(root, 'firmware'), { recursive: true });
  const release = await takeLock(join(root, 'build.lock'), log);
  try {
    if (existsSync(firmware)) return { firmware, loader, key };
    const started = performance.now();
    // One manifest folder for every variant ("app", so one output folder): its config is the variant's.
    const app = join(root, 'app');
    mkdirSync(app, { recursive: true });
    writeFileSync(join(app, 'manifest.json'), `${JSON.stringify({ include: PRODUCT_MANIFEST, config }, null, '\t')}\n`);
    const out = join(root, 'out');
    mkdirSync(out, { recursive: true });
    log(`virtual board firmware: building ${key} (${JSON.stringify(config)})`);
    const generate = () => runStep('mcconfig', ['-i', '-p', 'lin', '-o', out, join(app, 'manifest.json')], { env });
    let generated = await generate();
    if (generated.code !== 0) throw new FirmwareBuildError('mcconfig', `mcconfig -p lin failed:\n${tail(generated.output)}`);
    let makefile = findMakefile(join(out, 'tmp', 'lin'));
    // A manifest that now maps a module to another source: the earlier output cannot be trusted.
    const rules = ruleDigest(readFileSync(makefile, 'utf8'));
    const rulesFile = join(out, 'rules.sha256');
    if (existsSync(rulesFile) && readFileSync(rulesFile, 'utf8') !== rules) {
      log('virtual board firmware: the manifests map modules differently now: building from scratch');
      rmSync(join(out, 'tmp'), { recursive: true, force: true });
      rmSync(join(out, 'bin'), { recursive: true, force: true });
      generated = await generate();
      if (generated.code !== 0) throw new FirmwareBuildError('mcconfig', `mcconfig -p lin failed:\n${tail(generated.output)}`);
      makefile = findMakefile(join(out, 'tmp', 'lin'));
    }
    writeFileSync(rulesFile, rules);
    const make = await runStep('make', ['-f', makefile, ...NO_LAUNCH, 'build'], { env, cwd: join(makefile, '..') });
    if (make.code !== 0) throw new FirmwareBuildError('make', `the host build failed:\n${tail(make.output, 40)}`);
    const regexps = preloadedRegExps(readFileSync(join(makefile, '..', 'mc.xs.c'), 'utf8'));
    if (regexps > 0) throw new FirmwareBuildError('xsl', `the archive holds ${regexps} ${PRELOADED_REGEXP_PROBLEM}`);
    const library = findFile(join(out, 'bin', 'lin'), 'mc.so');
    const temporary = `${firmware}.${process.pid}`;
    copyFileSync(library, temporary);
    const strip = await runStep('strip', ['--strip-unneeded', temporary], { env });
    if (strip.code !== 0) throw new FirmwareBuildError('strip', strip.output.trim());
    renameSync(temporary, firmware);
    log(`virtual board firmware: ${key} built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return { firmware, loader, key };
  } finally {
    release();
  }
}

function findFile(dir: string, name: string): string {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = findFileOrNull(path, name);
      if (found) return found;
    } else if (entry.name === name) return path;
  }
  throw new FirmwareBuildError('make', `no ${name} under ${dir}`);
}

function findFileOrNull(dir: string, name: string): string | null {
  try {
    return findFile(dir, name);
  } catch {
    return null;
  }
}

function findMakefile(dir: string): string {
  return findFile(dir, 'makefile');
}
