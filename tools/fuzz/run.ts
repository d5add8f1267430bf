// `npm run fuzz`: the seeded fuzz suites run longer than `npm test` runs them.
//
//   npm run fuzz -- [--requests 3000] [--seed S] [--concurrency N] [--only cloud|device]
//                   [--url http://127.0.0.1:8080 --token <super-user JWT>]   (fuzz a running cloud)
//
// The cloud suite starts a cloud in-process on SQLite unless --url names one; the device suite starts
// a virtual controller (the SDK's host build of the production firmware) with its own flash. Each
// prints its figures and the seed; the exit code is 1 when any rule broke, 2 on a usage error.
import { parseArgs } from 'node:util';
import { formatFuzzReport, runCloudFuzz } from './cloud/runner.ts';
import { startFuzzCloud } from './cloud/server.ts';
import { runDeviceFuzz, startFuzzBoard } from './device-fuzz.ts';

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: npm run fuzz -- [--requests N] [--seed S] [--concurrency N] [--only cloud|device] [--url URL --token JWT]\n`);
  process.exit(2);
}

async function fuzzCloud(o: { requests: number; seed: number; concurrency: number; url?: string; token?: string }): Promise<boolean> {
  const cloud = o.url ? undefined : await startFuzzCloud();
  try {
    const baseUrl = o.url ?? cloud!.url;
    const token = o.token ?? cloud?.adminToken;
    if (!token) usage('--token <super-user JWT> is required with --url');
    process.stderr.write(`cloud: fuzzing ${baseUrl} with seed ${o.seed}, ${o.requests} requests\n`);
    const report = await runCloudFuzz({
      baseUrl,
      adminToken: token,
      ...(cloud ? { nonSuperToken: cloud.nonSuperToken } : {}),
      requests: o.requests,
      seed: o.seed,
      concurrency: o.concurrency,
      onProgress: (done, total) => done % 1000 === 0 && process.stderr.write(`  cloud ${done}/${total}\n`),
    });
    process.stdout.write(formatFuzzReport(report) + '\n');
    if (cloud?.errorLogs.length) process.stdout.write(`  ERROR logs: ${JSON.stringify(cloud.errorLogs.slice(0, 5))}\n`);
    return report.failures.length === 0 && report.canaryIntact && report.healthOk && !cloud?.errorLogs.length;
  } finally {
    await cloud?.close();
  }
}

async function fuzzDevice(o: { requests: number; seed: number; concurrency: number }): Promise<boolean> {
  const fuzz = await startFuzzBoard();
  try {
    process.stderr.write(`device: fuzzing a virtual controller, the SDK's host build (${fuzz.target.urls.ethernet}, ${fuzz.target.urls.softap}) with seed ${o.seed}, ${o.requests} requests\n`);
    const report = await runDeviceFuzz(fuzz.target, {
      requests: o.requests,
      seed: o.seed,
      concurrency: o.concurrency,
      onProgress: (done) => done % 1000 === 0 && process.stderr.write(`  device ${done}/${o.requests}\n`),
    });
    const errors = fuzz.board.consoleLines.filter((l) => /^LOG ERROR/.test(l));
    process.stdout.write(
      [
        `device fuzz seed=${report.seed} requests=${report.requests} duration=${report.seconds.toFixed(1)}s`,
        `  by status: ${JSON.stringify(report.byStatus)}`,
        `  resets (watchdog, XS aborts, panics, restarts): ${fuzz.board.reboots.length}${fuzz.board.reboots.length ? ` ${JSON.stringify(fuzz.board.reboots.slice(0, 5))}` : ''}, ERROR log lines: ${errors.length}, firmware CPU ${fuzz.board.cpuMs()} ms`,
        ...(report.failures.length ? [`  ${report.failures.length} failure(s) (replay: npm run fuzz -- --only device --seed ${o.seed} --requests ${o.requests} --concurrency 1):`, ...report.failures.map((f) => `    ${f}`)] : []),
      ].join('\n') + '\n',
    );
    return report.failures.length === 0 && fuzz.board.reboots.length === 0 && errors.length === 0;
  } finally {
    await fuzz.close();
  }
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        requests: { type: 'string', default: '3000' },
        seed: { type: 'string' },
        concurrency: { type: 'string' },
        only: { type: 'string' },
        url: { type: 'string' },
        token: { type: 'string' },
      },
    }));
  } catch (err) {
    usage(err instanceof Error ? err.message : String(err));
  }
  const requests = Number(values.requests);
  if (!Number.isSafeInteger(requests) || requests < 1) usage(`--requests must be a positive whole number, got "${values.requests}"`);
  const seed = values.seed === undefined ? Date.now() % 1_000_000 : Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0) usage(`--seed must be a whole number, got "${values.seed}"`);
  if (values.only !== undefined && values.only !== 'cloud' && values.only !== 'device') usage(`--only must be cloud or device, got "${values.only}"`);
  const concurrency = values.concurrency === undefined ? undefined : Number(values.concurrency);
  if (concurrency !== undefined && !(Number.isSafeInteger(concurrency) && concurrency >= 1)) usage(`--concurrency must be 1 or more, got "${values.concurrency}"`);
  let ok = true;
  if (values.only !== 'device') ok = (await fuzzCloud({ requests, seed, concurrency: concurrency ?? 8, ...(values.url ? { url: values.url } : {}), ...(values.token ? { token: values.token } : {}) })) && ok;
  if (values.only !== 'cloud') ok = (await fuzzDevice({ requests, seed, concurrency: concurrency ?? 4 })) && ok;
  process.exitCode = ok ? 0 : 1;
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
