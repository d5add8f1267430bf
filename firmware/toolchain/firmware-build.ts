// The firmware built by the Moddable SDK for the ESP32-S3 (docs/moddable-build.md): the SDK's own
// mcconfig writes the makefile, and its stages run as the SDK wrote them: TypeScript and xsc per
// module, xsl (the preloaded, linked XS archive mc.xs.c), mcrez (mc.resources.c). Without ESP-IDF the
// makefile is given the least it needs to reach those targets (a placeholder IDF_PATH, the ESP-IDF
// version it expects, no sdkconfig.h prerequisite); the C compile and link for the chip do not run.
// With IDF_PATH set, the makefile's `build` target runs as `mcconfig -m -t build` would run it.
//
// The makefile's launch targets run `pkill serial2xsbug`: make is always given the overrides below,
// and only targets that launch nothing are named (../shared/moddable-sdk/SNAPSHOT.md).
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parsePartitionCsv } from '../image/partition-csv.ts';
import { PARTITION_TYPES } from '../image/partition-table.ts';
import { manifestProblems } from './manifest-check.ts';
import { makeList, makeVariable, ruleDigest } from './makefile.ts';
import { runStep, tail, type StepResult } from './process.ts';
import { onPath, REPO_ROOT, SdkBuildError, type SdkTools } from './sdk.ts';
import { parseXslOutput, PRELOADED_REGEXP_PROBLEM, preloadedRegExps, xsArchiveSize, xslError, type XsArchiveSize, type XslReport } from './xs-archive.ts';

export const PLATFORM = 'esp32/esp32s3';
export const NO_LAUNCH = ['KILL_SERIAL2XSBUG=', 'KILL_SIMULATOR=', 'START_XSBUG=', 'START_SIMULATOR='] as const;
export const MANIFESTS = {
  production: join(REPO_ROOT, 'firmware/src/platform/moddable/manifest.json'),
  debug: join(REPO_ROOT, 'firmware/src/platform/moddable/manifest_debug.json'),
} as const;
export type Variant = keyof typeof MANIFESTS;

export interface FirmwareBuildOptions {
  manifest: string;
  /** A label for the figures: production, debug, or the manifest's file name. */
  variant: string;
  /** mcconfig's -o: the makefile and everything built go under it. */
  outDir: string;
  tools: SdkTools;
  /** ESP-IDF: when given, the whole build for the chip runs (`build` target). */
  idfPath?: string;
  /** Throw away earlier output first (TypeScript and xsc are otherwise incremental). */
  clean?: boolean;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface Stage {
  name: string;
  seconds: number;
  detail: string;
}

export interface FirmwareBuild {
  variant: string;
  manifest: string;
  /** The folder of mc.xs.c, mc.resources.c and the makefile. */
  tmpDir: string;
  xsC: string;
  resourcesC: string;
  /** Modules linked into the archive, and how many of them are preloaded. */
  modules: number;
  preloaded: number;
  archive: XsArchiveSize;
  resourcesBytes: number;
  xsl: XslReport;
  stages: Stage[];
  seconds: number;
  /** The first app partition of the manifest's PARTITIONS_FILE: what one OTA slot holds. */
  appSlotBytes: number;
  /** The app image ESP-IDF linked, when it ran. */
  appImageBytes?: number;
}

/**
 * The firmware's own module names: those whose source (after the `$(TMP_DIR)/tsc/<name>` prefix of a
 * TypeScript module) is in this repository, outside the SDK copy and node_modules, from the
 * makefile's `<name>.xsb: <source>` rules.
 */
export function ownModules(makefile: string, sdkRoot: string, repoRoot = REPO_ROOT): Set<string> {
  const own = new Set<string>();
  for (const m of makefile.matchAll(/^\$\(MODULES_DIR\)\/(.+)\.xsb: (\S+)/gm)) {
    const name = m[1]!;
    const source = m[2]!.replace(`$(TMP_DIR)/tsc/${name}`, '');
    if (source.startsWith(`${repoRoot}/`) && !source.startsWith(`${sdkRoot}/`) && !source.startsWith(`${repoRoot}/node_modules/`)) own.add(name);
  }
  return own;
}

export class FirmwareBuildError extends SdkBuildError {
  override name = 'FirmwareBuildError';
  constructor(
    readonly stage: string,
    message: string,
  ) {
    super(message);
  }
}

export async function buildFirmware(o: FirmwareBuildOptions): Promise<FirmwareBuild> {
  const log = o.log ?? (() => {});
  const started = performance.now();
  const env: NodeJS.ProcessEnv = {
    ...(o.env ?? process.env),
    MODDABLE: o.tools.moddable,
    // mcconfig compiles the .ts modules with the tsc on PATH: the project's TypeScript.
    PATH: [o.tools.bin, join(REPO_ROOT, 'node_modules', '.bin'), (o.env ?? process.env).PATH ?? ''].join(':'),
  };
  if (!o.idfPath) delete env.IDF_PATH;
  if (o.clean) rmSync(o.outDir, { recursive: true, force: true });
  mkdirSync(o.outDir, { recursive: true });
  const stages: Stage[] = [];
  const stage = async (name: string, step: Promise<StepResult>, failed: (r: StepResult) => string | undefined = () => undefined) => {
    log(`firmware build: ${o.variant}: ${name}`);
    const r = await step;
    const why = r.code !== 0 ? (failed(r) ?? `exit ${r.code}`) : undefined;
    // Without ESP-IDF, make's `git describe` in the placeholder IDF_PATH complains on every run: noise.
    const output = o.idfPath ? r.output : r.output.replace(/^fatal: not a git repository.*\n/gm, '');
    if (why) throw new FirmwareBuildError(name, `${o.variant}: ${name} failed: ${why}\n${tail(output)}`);
    stages.push({ name, seconds: r.seconds, detail: '' });
    return r;
  };

  await stage('mcconfig', runStep('mcconfig', ['-p', PLATFORM, '-o', o.outDir, o.manifest], { env }));
  const tmpDir = join(o.outDir, 'tmp', ...PLATFORM.split('/'), 'release', basename(resolve(o.manifest, '..')));
  const makefilePath = join(tmpDir, 'makefile');
  if (!existsSync(makefilePath)) throw new FirmwareBuildError('mcconfig', `${o.variant}: mcconfig wrote no makefile at ${makefilePath}`);
  let makefile = readFileSync(makefilePath, 'utf8');
  // A manifest that now maps a module to another source: the earlier output cannot be trusted (make
  // compares times, not sources).
  const rulesFile = join(o.outDir, 'rules.sha256');
  if (existsSync(rulesFile) && readFileSync(rulesFile, 'utf8') !== ruleDigest(makefile)) {
    log(`firmware build: ${o.variant}: the manifests map modules differently now: building from scratch`);
    rmSync(join(o.outDir, 'tmp'), { recursive: true, force: true });
    rmSync(join(o.outDir, 'bin'), { recursive: true, force: true });
    await stage('mcconfig', runStep('mcconfig', ['-p', PLATFORM, '-o', o.outDir, o.manifest], { env }));
    makefile = readFileSync(makefilePath, 'utf8');
  }
  writeFileSync(rulesFile, ruleDigest(makefile));
  const problems = manifestProblems(JSON.parse(readFileSync(join(tmpDir, 'manifest_flat.json'), 'utf8')), makefile, o.tools.moddable, PLATFORM);
  if (problems.length > 0) throw new FirmwareBuildError('mcconfig', `${o.variant}: the manifest names what does not exist (mcconfig would leave it out in silence):\n${problems.map((p) => `  ${p}`).join('\n')}`);
  const xsC = join(tmpDir, 'mc.xs.c');
  const resourcesC = join(tmpDir, 'mc.resources.c');

  const overrides: string[] = [...NO_LAUNCH];
  // mcconfig writes the manifest's `SDKCONFIGPATH ?=` as a plain assignment: a release's own ESP-IDF
  // settings folder (docs/moddable-build.md, Versions) reaches make only on its command line.
  if (env.SDKCONFIGPATH) overrides.push(`SDKCONFIGPATH=${resolve(env.SDKCONFIGPATH)}`);
  if (!o.idfPath) {
    // The least ESP-IDF the XS targets need: a folder for IDF_PATH (the makefile stops when it is
    // empty), the version it expects instead of `git describe` there, and no sdkconfig.h (idf.py).
    const placeholder = join(o.outDir, 'no-esp-idf');
    mkdirSync(placeholder, { recursive: true });
    overrides.push(`IDF_PATH=${placeholder}`, `IDF_VERSION=${makeVariable(makefile, 'EXPECTED_ESP_IDF') ?? 'v6.0'}`, 'SDKCONFIG_H=');
  }
  const make = (targets: string[], extra: string[] = []) =>
    runStep('make', ['-f', makefilePath, `-j${Math.max(2, Number(env.FIRMWARE_BUILD_JOBS) || 2)}`, ...overrides, ...extra, ...targets], { cwd: tmpDir, env });

  // 1. Every module: tsc then xsc for TypeScript, xsc for JavaScript, xsid for C. The makefile's own
  // MODULES list, named through a target of ours given on the command line (the file is unchanged).
  const compile = await stage('compile', make(['fleet-modules'], ['--eval=.SECONDEXPANSION:', '--eval=fleet-modules: $$(MODULES)']), (r) =>
    /typescript compile failure/.test(r.output) ? `TypeScript refused a module:\n${typeScriptErrors(r.output)}` : undefined,
  );
  const tscCount = (compile.output.match(/^# tsc /gm) ?? []).length;
  const xscCount = (compile.output.match(/^# xsc /gm) ?? []).length;
  stages.at(-1)!.detail = `tsc ${tscCount}, xsc ${xscCount} (modules already compiled are not recompiled)`;

  // 2. xsl, always afresh: the preload runs every module's top level and links the archive.
  rmSync(xsC, { force: true });
  const link = await stage('xsl', make([xsC]), (r) => {
    const error = xslError(r.output);
    return error ? `${error}${/module "[^"]+" not found/.test(error) ? ' (a module is imported, or named by the manifest, but no manifest entry provides it)' : ''}` : undefined;
  });
  const xsl = parseXslOutput(link.output);
  const own = ownModules(makefile, o.tools.moddable);
  const ours = xsl.warnings.filter((w) => own.has(w.module));
  if (ours.length > 0) {
    // A preloaded module's objects are frozen in flash: one written after boot would be aliased in RAM
    // (and is module state the firmware promises not to have: docs/moddable-build.md).
    throw new FirmwareBuildError(
      'xsl',
      `${o.variant}: xsl's preload check found module-level state in the firmware's own modules:\n${ours.map((w) => `  ${w.module}: ${w.text}`).join('\n')}`,
    );
  }
  const regexps = preloadedRegExps(readFileSync(xsC, 'utf8'));
  if (regexps > 0) throw new FirmwareBuildError('xsl', `${o.variant}: the archive holds ${regexps} ${PRELOADED_REGEXP_PROBLEM}`);
  stages.at(-1)!.detail = `${xsl.instances} instances, ${xsl.keys} keys`;

  // 3. mcrez, always afresh.
  rmSync(resourcesC, { force: true });
  const rez = await stage('mcrez', make([resourcesC]));
  const resourcesBytes = Number(/Total resource size: (\d+) bytes/.exec(rez.output)?.[1] ?? statSync(resourcesC).size);
  stages.at(-1)!.detail = `${resourcesBytes} bytes of resources`;

  const archive = xsArchiveSize(readFileSync(xsC, 'utf8'));
  const preloaded = makeList(makefile, 'PRELOADS').filter((p) => p.startsWith('-p ')).length;

  let appImageBytes: number | undefined;
  if (o.idfPath) {
    const args = ['-f', makefilePath, ...overrides, 'build'];
    const step = onPath('idf.py', env)
      ? runStep('make', args, { cwd: tmpDir, env: { ...env, IDF_PATH: o.idfPath } })
      : runStep('bash', ['-c', `export IDF_EXPORT_QUIET=1 && source "$IDF_PATH/export.sh" >/dev/null && exec make ${args.map(shellQuote).join(' ')}`], {
          cwd: tmpDir,
          env: { ...env, IDF_PATH: o.idfPath },
        });
    await stage('esp-idf', step, (r) => (/ESP-IDF Build Failed|Error/.test(r.output) ? 'ESP-IDF refused the build' : undefined));
    const image = join(makeVariable(makefile, 'BIN_DIR') ?? tmpDir, 'xs_esp32.bin');
    if (!existsSync(image)) throw new FirmwareBuildError('esp-idf', `${o.variant}: ESP-IDF finished without ${image}`);
    appImageBytes = statSync(image).size;
  }

  const result: FirmwareBuild = {
    variant: o.variant,
    manifest: o.manifest,
    tmpDir,
    xsC,
    resourcesC,
    modules: archive.scripts,
    preloaded,
    archive,
    resourcesBytes,
    xsl,
    stages,
    seconds: (performance.now() - started) / 1000,
    appSlotBytes: appSlotBytes(makeVariable(makefile, 'PARTITIONS_FILE')),
    ...(appImageBytes !== undefined ? { appImageBytes } : {}),
  };
  writeFileSync(join(o.outDir, 'firmware-build.json'), `${JSON.stringify({ ...result, xsl: { ...xsl, warnings: xsl.warnings } }, null, 2)}\n`);
  return result;
}

/** The size of the first app partition of a partition table CSV (DESIGN.md section 7: 3 MB). */
export function appSlotBytes(partitionsFile: string | undefined): number {
  if (!partitionsFile) throw new FirmwareBuildError('mcconfig', 'the manifest names no PARTITIONS_FILE: the app slot size is unknown');
  const app = parsePartitionCsv(readFileSync(partitionsFile, 'utf8'), partitionsFile).find((p) => p.type === PARTITION_TYPES.app);
  if (!app) throw new FirmwareBuildError('mcconfig', `${partitionsFile} has no app partition`);
  return app.size;
}

/** tsc's `file(line,col): error TSnnnn: …` lines. */
function typeScriptErrors(output: string): string {
  return (output.match(/^.*error TS\d+:.*$/gm) ?? ['(no tsc error line; see the output below)']).join('\n');
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

const fixed = (n: number, digits = 1) => n.toFixed(digits);

/** The figures, one line per manifest, then what they leave to fit in the app slot. */
export function figureLines(b: FirmwareBuild): string[] {
  const lines = [
    `firmware build: manifest=${b.variant} modules=${b.modules} preloaded=${b.preloaded} xs_archive_bytes=${b.archive.bytes} resources_bytes=${b.resourcesBytes} seconds=${fixed(b.seconds)}`,
  ];
  if (b.appImageBytes !== undefined) {
    lines.push(`firmware fit: manifest=${b.variant} app_slot_bytes=${b.appSlotBytes} app_image_bytes=${b.appImageBytes} headroom_bytes=${b.appSlotBytes - b.appImageBytes}`);
  } else {
    const used = b.archive.bytes + b.resourcesBytes;
    lines.push(
      `firmware fit: manifest=${b.variant} app_slot_bytes=${b.appSlotBytes} xs_archive_and_resources_bytes=${used} headroom_bytes=${b.appSlotBytes - used} ` +
        '(before the XS engine, ESP-IDF and the natives, which were not compiled here)',
    );
  }
  return lines;
}
