// `npm run build:firmware`: the firmware built by the Moddable SDK for the ESP32-S3, both manifests
// (production manifest.json and manifest_debug.json), into build/firmware/<variant>/ by default.
//
//   npm run build:firmware                       both manifests; the SDK's tools are built first if need be
//   npm run build:firmware -- --only debug       one manifest
//   npm run build:firmware -- --out DIR --clean  another folder, from scratch
// With IDF_PATH set, ESP-IDF compiles and links the app for the chip (the makefile's `build` target).
// Exit codes: 0 built, 1 a stage of the build failed (its output is printed), 2 usage, 4 a prerequisite
// or the SDK is missing.
import { Command, InvalidArgumentError, Option } from 'commander';
import { join, resolve } from 'node:path';
import { buildFirmware, figureLines, MANIFESTS, PLATFORM, type Variant } from '../../firmware/toolchain/firmware-build.ts';
import { ensureSdkTools, REPO_ROOT } from '../../firmware/toolchain/sdk.ts';

const program = new Command('build:firmware')
  .description(`Build the firmware with the Moddable SDK for ${PLATFORM}: TypeScript, xsc, xsl (mc.xs.c), mcrez (mc.resources.c)`)
  .addOption(new Option('--only <variant>', 'build one manifest').choices(Object.keys(MANIFESTS)))
  .option('--out <dir>', 'output folder (one sub-folder per manifest)', join(REPO_ROOT, 'build', 'firmware'))
  .option('--clean', 'remove earlier output first (TypeScript and xsc are otherwise incremental)', false)
  .option('--idf <path>', 'ESP-IDF to compile and link the app for the chip (default: $IDF_PATH)', (v) => {
    if (v === '') throw new InvalidArgumentError('must be a folder');
    return resolve(v);
  })
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))
  .parse();

const options = program.opts<{ only?: Variant; out: string; clean: boolean; idf?: string }>();
const idfPath = options.idf ?? process.env.IDF_PATH;
const log = (line: string) => console.log(line);

try {
  const tools = await ensureSdkTools({ log });
  console.log(`moddable sdk: ${tools.source.version} (${tools.source.commit.slice(0, 12)}) from ${tools.source.from}, tools in ${tools.bin}${tools.built ? ` (built in ${tools.seconds.toFixed(1)} s)` : ''}`);
  const variants = options.only ? [options.only] : (Object.keys(MANIFESTS) as Variant[]);
  const lines: string[] = [];
  for (const variant of variants) {
    const build = await buildFirmware({ manifest: MANIFESTS[variant], variant, outDir: join(resolve(options.out), variant), tools, ...(idfPath ? { idfPath } : {}), clean: options.clean, log });
    for (const s of build.stages) console.log(`  ${variant} ${s.name}: ${s.seconds.toFixed(1)} s${s.detail ? ` (${s.detail})` : ''}`);
    const sdkWarnings = build.xsl.warnings.length;
    if (sdkWarnings > 0) console.log(`  ${variant} xsl: ${sdkWarnings} preload warning(s) in the SDK's own modules (${[...new Set(build.xsl.warnings.map((w) => w.module))].join(', ')}); none in the firmware's`);
    console.log(`  ${variant}: ${build.xsC}`);
    console.log(`  ${variant}: ${build.resourcesC}`);
    lines.push(...figureLines(build));
  }
  if (!idfPath) {
    console.log('ESP-IDF: IDF_PATH is not set, so the C compile and link for the chip were not run here (TypeScript, xsc, xsl and mcrez were).');
  }
  for (const line of lines) console.log(line);
} catch (err) {
  console.error(`build:firmware: ${(err as Error).message}`);
  process.exitCode = (err as { exitCode?: number }).exitCode ?? 1;
}
