// Mutation testing (StrykerJS 9, `npm run test:mutation`): the project's measure of how strong the
// tests are over the modules that carry the spec's security and data rules. docs/mutation-testing.md
// has the module set, how to run it, the score and the surviving mutants with why.
//
// This file is also a Stryker plugin module (see `strykerPlugins` below): its `summary` reporter
// prints `mutation score: <percent>` and the surviving mutants by file at the end of a run.
import { declareClassPlugin, PluginKind } from '@stryker-mutator/api/plugin';

/** The mutation set, in two groups; the OTA client (firmware/src/core/ota/) is out for now. */
export const MUTATION_SET = {
  firmware: [
    'firmware/src/core/provisioning/mode.ts',
    'firmware/src/core/provisioning/tokens.ts',
    'firmware/src/core/auth/visual-token.ts',
    'firmware/src/core/auth/failure-throttle.ts',
    'firmware/src/core/backup/local-store.ts',
    'firmware/src/core/cloud/auto-backup.ts',
    'firmware/src/core/records.ts',
    'firmware/src/core/cloud/backup-client.ts',
    'firmware/src/core/provisioning/target.ts',
    'firmware/src/core/provisioning/client.ts',
    'firmware/src/core/client-configuration.ts',
    'firmware/src/core/crypto/ffce.ts',
    'firmware/src/core/crypto/device-keys.ts',
    'firmware/src/core/provisioning/softap-password.ts',
  ],
  cloud: [
    'cloud/auth/jwt.ts',
    'cloud/auth/device-signature.ts',
    'cloud/backup/routes.ts',
    'cloud/backup/etag.ts',
    'cloud/backup/ffce.ts',
    'cloud/ota/select.ts',
    'cloud/appconfig/service.ts',
    'cloud/appconfig/routes.ts',
  ],
};

/**
 * The tests run against each mutant: the fast Node tests of those modules (vitest.mutation.config.ts
 * includes exactly these). Not the XS runs (the same portable cases run on Node in core.test.ts),
 * not PostgreSQL, not the harness or fuzz suites.
 */
export const MUTATION_TESTS = [
  'test/firmware/core.test.ts',
  'test/firmware/crypto.test.ts',
  'test/cloud/backup.test.ts',
  'test/cloud/backup-headers.test.ts',
  'test/cloud/backup-abort.test.ts',
  'test/cloud/appconfig.test.ts',
  'test/cloud/admin-public-key.test.ts',
  'test/cloud/jwt-canonical.test.ts',
  'test/cloud/jwt-verifier.test.ts',
  'test/cloud/appconfig-log.test.ts',
  'test/cloud/device-signature-unit.test.ts',
  'test/cloud/backup-records.test.ts',
  'test/cloud/appconfig-bake.test.ts',
  'test/cloud/ota.test.ts',
  'test/cloud/fleet-limits.test.ts',
];

const pct = (n) => (Number.isFinite(n) ? `${n.toFixed(2)}%` : 'n/a');
const DETECTED = new Set(['Killed', 'Timeout']);
const COUNTED = new Set(['Killed', 'Timeout', 'Survived', 'NoCoverage']);

/** Prints the score (overall, per group, per file) and every surviving mutant with its place. */
class SummaryReporter {
  static inject = [];

  onMutationTestReportReady(report) {
    const out = [];
    const groups = new Map();
    const survivorsByFile = [];
    let detected = 0;
    let counted = 0;
    for (const [file, { mutants, source }] of Object.entries(report.files)) {
      const lines = source.split('\n');
      const valid = mutants.filter((m) => COUNTED.has(m.status));
      const killed = valid.filter((m) => DETECTED.has(m.status)).length;
      const group = Object.entries(MUTATION_SET).find(([, files]) => files.includes(file))?.[0] ?? 'other';
      const g = groups.get(group) ?? { detected: 0, counted: 0, files: [] };
      g.detected += killed;
      g.counted += valid.length;
      g.files.push(`  ${pct((100 * killed) / valid.length).padStart(8)}  ${String(killed).padStart(4)}/${String(valid.length).padEnd(4)} ${file}`);
      groups.set(group, g);
      detected += killed;
      counted += valid.length;
      const survivors = valid.filter((m) => !DETECTED.has(m.status));
      if (survivors.length > 0) {
        survivorsByFile.push(`${file} (${survivors.length})`);
        for (const m of survivors.sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column)) {
          const code = (lines[m.location.start.line - 1] ?? '').trim().slice(0, 110);
          const replacement = (m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 60);
          survivorsByFile.push(`  ${m.location.start.line}:${m.location.start.column} ${m.status} ${m.mutatorName} -> ${replacement}\n      ${code}`);
        }
      }
    }
    out.push('', 'Surviving mutants by file:', ...(survivorsByFile.length ? survivorsByFile : ['  (none)']), '');
    for (const [name, g] of groups) {
      out.push(`${name}: ${pct((100 * g.detected) / g.counted)} (${g.detected}/${g.counted})`, ...g.files.sort());
    }
    // A test file that fails to load makes Stryker's dry run pass with its tests simply missing, and
    // every mutant it would kill survives: say so loudly and fail the command.
    const ran = report.testFiles ?? {};
    const missing = MUTATION_TESTS.filter((f) => !Object.keys(ran).some((k) => k.endsWith(f) && ran[k].tests.length > 0));
    if (missing.length > 0) {
      out.push('', `ERROR: these test files ran no tests (they failed to load in the sandbox; run them with vitest to see why): ${missing.join(', ')}`);
      process.exitCode = 1;
    }
    out.push('', `mutation score: ${pct((100 * detected) / counted)}`);
    console.log(out.join('\n'));
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, 'summary', SummaryReporter)];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner'],
  appendPlugins: [new URL(import.meta.url).pathname],
  mutate: [...MUTATION_SET.firmware, ...MUTATION_SET.cloud],
  coverageAnalysis: 'perTest',
  // Incremental: a rerun only tries mutants whose code or covering tests changed (docs/mutation-testing.md).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  // CPU is shared: one or two test processes. `npm run test:mutation -- --concurrency 4` on a bigger machine.
  concurrency: 2,
  timeoutMS: 10_000,
  timeoutFactor: 2,
  // The type checker would type-check every mutant: too slow; tsc runs in `npm test` instead.
  checkers: [],
  reporters: ['progress', 'html', 'json', 'summary'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  // Left out of the sandbox copy: outputs only (anything a test imports must stay in).
  ignorePatterns: ['bench-report', 'reports', 'data', 'coverage', '.ci/results', 'dist', '.cache'],
  ignoreStatic: false,
};
