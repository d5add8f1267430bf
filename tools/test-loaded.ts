// npm run test:loaded [-- --runs N --burners B --no-bench] [vitest files…]: the suites that drive boards
// and servers, run again and again beside CPU burners, as on a shared CI machine. A test that fails
// only under load shows a defect, of the product or of the test: this is where it shows.
// By default: the firmware, harness and fuzz suites (virtual boards, servers on loopback, serial
// ports), then `npm run bench` (every scenario on a virtual rig), per run, beside two burners.
// Prints one line per suite and run, then `loaded runs=<n> burners=<b> passed=<p> failed=<f>`; exits 1
// when any run failed, 2 on a usage error. The burners are processes of their own that stop when
// this one ends, however it ends (each watches its parent).
import { spawn, type ChildProcess } from 'node:child_process';
import { Command, InvalidArgumentError } from 'commander';

const DEFAULT_FILES = ['test/firmware', 'test/harness', 'test/fuzz'];

function integer(min: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`must be an integer of at least ${min}, not ${JSON.stringify(value)}`);
    return n;
  };
}

const program = new Command('test:loaded')
  .description('Run the suites that drive boards and servers repeatedly beside CPU burners')
  .argument('[files...]', 'vitest files or folders', DEFAULT_FILES)
  .option('--runs <n>', 'how many times', integer(1), 3)
  .option('--burners <n>', 'busy processes beside the tests', integer(0), 2)
  .option('--no-bench', 'leave out npm run bench')
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));

/** A process that keeps one core busy and ends itself once its parent is gone. */
function burner(): ChildProcess {
  const program = 'const parent = process.ppid; for (;;) { const t = Date.now(); while (Date.now() - t < 200) {} if (process.ppid !== parent) process.exit(0); }';
  return spawn(process.execPath, ['-e', program], { stdio: 'ignore' });
}

function run(command: string, args: string[]): Promise<{ code: number; seconds: number; tail: string }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } });
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString()).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('close', (code) => resolve({ code: code ?? 1, seconds: (performance.now() - t0) / 1000, tail }));
  });
}

async function main(): Promise<void> {
  program.parse();
  const files = program.processedArgs[0] as string[];
  const o = program.opts<{ runs: number; burners: number; bench: boolean }>();
  const burners = Array.from({ length: o.burners }, burner);
  const stop = () => burners.forEach((b) => b.kill('SIGKILL'));
  process.on('exit', stop);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
  console.log(`beside ${o.burners} CPU burners, ${o.runs} runs of: vitest ${files.join(' ')}${o.bench ? ', npm run bench' : ''}`);
  let passed = 0;
  let failed = 0;
  for (let i = 1; i <= o.runs; i++) {
    const suites: [string, string, string[]][] = [['vitest', 'npx', ['vitest', 'run', ...files]]];
    if (o.bench) suites.push(['bench', 'npm', ['run', '--silent', 'bench']]);
    for (const [name, command, args] of suites) {
      const r = await run(command, args);
      const totals = /Tests\s+(.*)\n/.exec(r.tail)?.[1] ?? /(\d+ passed, \d+ failed)\s*$/m.exec(r.tail)?.[1] ?? '';
      console.log(`run ${i} ${name}: ${r.code === 0 ? 'passed' : 'FAILED'} in ${r.seconds.toFixed(0)} s ${totals.trim()}`);
      if (r.code === 0) passed++;
      else {
        failed++;
        console.log(r.tail.split('\n').filter((l) => /FAIL|×|Error|failed/.test(l)).slice(-20).join('\n'));
      }
    }
  }
  console.log(`loaded runs=${o.runs} burners=${o.burners} passed=${passed} failed=${failed}`);
  process.exit(failed === 0 ? 0 : 1);
}

await main();
