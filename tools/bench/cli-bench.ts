// `npm run bench:cli`: how long the `fleet` command takes to start, against a bare `node -e 0`
// measured in the same run, alternating (docs/cli-start.md). Prints
//   cli cold_start_seconds=<median of fleet --help> ratio_to_node=<r>
//   cli firmware_list_seconds=<median of fleet firmware list against a running cloud> ratio_to_node=<r>
//   cli rebuild_seconds=<a start right after a source changed: the build, then the command>
//   cli from_source_seconds=<median of fleet --help run from the TypeScript sources through tsx> ratio_to_node=<r>
//   cli firmware_list_from_source_seconds=<the same for firmware list>
//   cli compiled_over_source help=<r> firmware_list=<r>
// Each figure is a whole process: spawn, load, answer, exit. Options: --runs N (default 15).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { wholeOption } from './args.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FLEET_JS = join(ROOT, 'bin/fleet.js');
const JWT_SECRET = 'bench-cli-secret-0123456789abcdef';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const RUNS = wholeOption('runs', values.runs, 3);

function timeRun(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      if (code === 0) resolve(seconds);
      else reject(new Error(`${args.join(' ')} exited ${code}: ${stderr.trim()}`));
    });
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function startCloud(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [FLEET_JS, 'serve', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: join(dir, 'cloud.sqlite'), JWT_SECRET, LOG_FORMAT: 'json', WORKERS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the cloud did not start in 120 s: ${out}`));
    }, 120_000);
    const read = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!.replace(/[",]+$/, ''));
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.on('exit', (code) => reject(new Error(`the cloud exited ${code}: ${out}`)));
  });
  return { url, child };
}

const fmt = (x: number) => x.toFixed(3);
const ratio = (x: number, base: number) => (x / base).toFixed(2);

const dir = mkdtempSync(join(tmpdir(), 'bench-cli-'));
const cloud = await startCloud(dir);
try {
  const env = { ...process.env, FLEET_CLOUD_URL: cloud.url, JWT_SECRET };
  // One start first: the build is fresh (npm ci built it; this rebuilds it after an edit).
  await timeRun([FLEET_JS, '--help'], env);
  const node: number[] = [];
  const help: number[] = [];
  const list: number[] = [];
  const fromSource: number[] = [];
  const listFromSource: number[] = [];
  const tsxLoader = import.meta.resolve('tsx');
  const fromSourceScript = `const { main } = await import(${JSON.stringify(join(ROOT, 'tools/fleet.ts'))}); process.exitCode = await main(process.argv);`;
  for (let i = 0; i < RUNS; i++) {
    node.push(await timeRun(['-e', '0'], env));
    help.push(await timeRun([FLEET_JS, '--help'], env));
    list.push(await timeRun([FLEET_JS, 'firmware', 'list', 'controller', '0x00000001', 'app'], env));
    fromSource.push(await timeRun(['--import', tsxLoader, '--input-type=module', '-e', fromSourceScript, 'fleet', '--help'], env));
    listFromSource.push(await timeRun(['--import', tsxLoader, '--input-type=module', '-e', fromSourceScript, 'fleet', 'firmware', 'list', 'controller', '0x00000001', 'app'], env));
  }
  // A source changed (its content, as an edit does): the next start builds again, then answers.
  const touched = join(ROOT, 'tools/cli/cloud-url.ts');
  const original = readFileSync(touched);
  let rebuild: number;
  try {
    writeFileSync(touched, Buffer.concat([original, Buffer.from('\n// bench:cli edit\n')]));
    rebuild = await timeRun([FLEET_JS, '--help'], env);
  } finally {
    writeFileSync(touched, original);
    utimesSync(touched, new Date(), new Date());
  }
  await timeRun([FLEET_JS, '--help'], env);
  const n = median(node);
  process.stdout.write(`node start (node -e 0) median_seconds=${fmt(n)} over ${RUNS} runs\n`);
  process.stdout.write(`cli cold_start_seconds=${fmt(median(help))} ratio_to_node=${ratio(median(help), n)}\n`);
  process.stdout.write(`cli firmware_list_seconds=${fmt(median(list))} ratio_to_node=${ratio(median(list), n)}\n`);
  process.stdout.write(`cli from_source_seconds=${fmt(median(fromSource))} ratio_to_node=${ratio(median(fromSource), n)} (fleet --help run from the sources through tsx, as before)\n`);
  process.stdout.write(`cli firmware_list_from_source_seconds=${fmt(median(listFromSource))} ratio_to_node=${ratio(median(listFromSource), n)}\n`);
  process.stdout.write(`cli compiled_over_source help=${ratio(median(help), median(fromSource))} firmware_list=${ratio(median(list), median(listFromSource))}\n`);
  process.stdout.write(`cli rebuild_seconds=${fmt(rebuild)}\n`);
} finally {
  cloud.child.kill('SIGTERM');
  await new Promise((r) => cloud.child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
