// The virtual boards' firmware builds the bench and the tests use, built ahead (npm run build:virtual,
// and the test suite's global set-up): every virtual board of the rigs in harness/rigs/, with the
// settings of every scenario it may run, and the plain controller and client of each build kind. A
// board whose build is missing still builds it when it starts (SdkBoard); ahead, the build's minute
// is not spent inside a test's time limit. One build at a time (firmware/sdk-host/build.ts takes a lock).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRig } from '../../harness/rig.ts';
import { scaleScenario, smallScaleScenario } from '../../harness/scale.ts';
import { scenarios } from '../../harness/scenarios/index.ts';
import { DEFAULT_VARIANT, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import { hostFirmware, variantConfig, type HostVariant } from '../../firmware/sdk-host/build.ts';

const RIGS = fileURLToPath(new URL('../../harness/rigs/', import.meta.url));

/** Each variant once, in a stable order. */
export function benchVariants(): HostVariant[] {
  const variants = new Map<string, HostVariant>();
  const add = (v: HostVariant) => variants.set(JSON.stringify(variantConfig(v)), v);
  for (const build of ['production', 'debug'] as const) {
    add({ ...DEFAULT_VARIANT, build });
    add({ ...DEFAULT_VARIANT, build, role: 'client', hardwareClass: 'lamp-c3', ethernet: false });
  }
  const settingsOf = [undefined, ...[...scenarios, smallScaleScenario, scaleScenario].map((s) => s.firmwareSettings)];
  for (const file of readdirSync(RIGS).filter((f) => f.endsWith('.json')).sort()) {
    const rig = loadRig(join(RIGS, file));
    for (const board of rig.boards.filter((b) => b.kind === 'virtual')) {
      for (const settings of settingsOf) add(variantOf(board, settings ? { settings: settings as Record<string, number> } : {}));
    }
  }
  return [...variants.values()];
}

/** Builds what is missing; `log` hears one line per build. Returns how many variants there are. */
export async function prebuild(log: (line: string) => void = () => undefined): Promise<number> {
  const all = benchVariants();
  for (const v of all) await hostFirmware(v, { log });
  return all.length;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = performance.now();
  const n = await prebuild((line) => process.stderr.write(`${line}\n`));
  process.stdout.write(`virtual board firmware: ${n} variants ready in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}
