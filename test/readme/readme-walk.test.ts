// The README walked as a new user walks it: every command of its ```sh blocks, read from the README
// itself, run as written, in order, in a folder of its own, each file it needs made by an earlier
// README line. Three things differ from a user's terminal and are the only rewrites: `npx fleet` runs
// bin/fleet.js directly (one line runs through npx to prove the bin link), the cloud's
// 127.0.0.1:8080 is the port this run's `npm start` took, and a board's example port
// (rfc2217://127.0.0.1:40123, /dev/ttyUSB0) is the virtual board this walk started. A command that
// cannot run here is listed below with the reason; a README command that no rule knows is run, so a
// new line in the README is tested the day it is written.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, toolEnv } from '../helpers/fleet-cli.ts';
import { readmeCommands, withoutComment, type ReadmeCommand } from '../helpers/readme-commands.ts';

interface Rule {
  match: RegExp;
  /** Not run, and why. */
  skip?: string;
  /** Run on a terminal (util-linux's `script`), these keys typed: a command that asks before it acts. */
  terminal?: string;
  /** Started in the background: ready when its output matches; `keep` holds it for later lines. */
  background?: { ready: RegExp; keep?: 'cloud' | 'board'; boards?: number };
}

const RULES: Rule[] = [
  { match: /^git clone <this repository>/, skip: 'a placeholder: the clone is the checkout this suite runs in' },
  { match: /^export (MODDABLE|LABGRID_SOURCE)=\/path\/to\//, skip: 'a placeholder path: .ci/run sets these to the SDK and labgrid it found' },
  { match: /^apt-get install /, skip: "the machine's Debian packages: .ci/run installs them as root" },
  { match: /^npm ci$/, skip: 'the set-up this suite runs after' },
  { match: /^npm test$/, skip: 'this suite itself' },
  { match: /^npm start$/, background: { ready: /cloud listening on http:\/\/\S+/, keep: 'cloud' } },
  { match: /^npm run build:firmware\b/, skip: "the SDK's build of both manifests: test/firmware/sdk-build.test.ts runs it (minutes)" },
  { match: /^npm run (fuzz|test:power-cuts|test:mutation|test:loaded)\b/, skip: 'minutes to hours of seeded runs; the suites run shorter ones (test/fuzz, test/firmware/power-cuts.test.ts)' },
  { match: /^npm run bench\b/, skip: 'a bench: figures over minutes, not a check (the scenario bench runs in test/harness/bench.test.ts)' },
  { match: /^npx fleet bench --list$/ },
  { match: /^npx fleet bench /, skip: 'the scenario bench over a rig: test/harness/bench.test.ts and bench-rfc2217.test.ts run it (minutes)' },
  { match: /\[--also /, skip: 'a synopsis with placeholders, not a command' },
  { match: /^npx fleet farm /, skip: "a board farm needs labgrid's coordinator: test/harness/farm-*.test.ts run these commands" },
  { match: /build\/flasher_args\.json|my-rig\.json/, skip: 'an ESP-IDF build or a rig of real boards, which this machine has not' },
  { match: /^npx fleet configurator /, background: { ready: /http:\/\/127\.0\.0\.1:\d+\// } },
  { match: /^npx fleet virtual harness\/rigs\/five-board\.json /, background: { ready: /^board /m, keep: 'board', boards: 3 } },
  { match: /^npx fleet virtual .*--secure-boot-key /, background: { ready: /^board source /m } },
  { match: /^npx fleet virtual /, background: { ready: /^board source /m, keep: 'board' } },
  { match: /^npx fleet monitor .*--log /, background: { ready: /^monitor: /m } },
  { match: /^npx fleet efuse burn-key /, terminal: 'BURN\n' },
];

function ruleFor(command: string): Rule | undefined {
  return RULES.find((r) => r.match.test(command));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** `npx fleet` as the README writes it, run as bin/fleet.js (npx's own resolution is checked once, in the walk). */
const PRELUDE = `npx() { if [ "$1" = fleet ]; then shift; node ${JSON.stringify(join(ROOT, 'bin', 'fleet.js'))} "$@"; else command npx "$@"; fi; }\n`;

interface Background {
  child: ChildProcess;
  output: () => string;
  stop(): Promise<number | null>;
}

const WALK = mkdtempSync(join(tmpdir(), 'readme-walk-'));
// The README's paths are the repository's: the walk folder holds links to what they name, and the
// files the README makes (keys, images, the site, ./data) land in the folder itself.
for (const name of ['package.json', 'bin', 'node_modules', 'harness']) symlinkSync(join(ROOT, name), join(WALK, name));

let cloudPort = 0;
let boardRfc2217: string | undefined;
const kept: { cloud?: Background; board?: Background } = {};
const env = (): NodeJS.ProcessEnv => ({
  ...toolEnv(),
  TMPDIR: process.env.TMPDIR ?? tmpdir(),
  PORT: String(cloudPort),
  FLEET_CLOUD_URL: `http://127.0.0.1:${cloudPort}`,
  FORCE_COLOR: '0',
});

function rewrite(command: string): string {
  let text = command.replaceAll('127.0.0.1:8080', `127.0.0.1:${cloudPort}`);
  if (boardRfc2217) text = text.replaceAll('rfc2217://127.0.0.1:40123', boardRfc2217).replaceAll('/dev/ttyUSB0', boardRfc2217);
  return text;
}

function runForeground(text: string, terminal?: string, timeoutMs = 180_000): { status: number | null; output: string } {
  const script = PRELUDE + text;
  const r =
    terminal === undefined
      ? spawnSync('bash', ['-c', script], { cwd: WALK, env: env(), stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' })
      : // -e: script exits with the command's status; the keys wait in the terminal until the command reads them.
        spawnSync('script', ['-qec', `bash -c ${shellQuote(script)}`, '/dev/null'], { cwd: WALK, env: env(), input: terminal, encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function startBackground(text: string): Background {
  // exec: the signal reaches the command itself, not the shell around it.
  const child = spawn('bash', ['-c', `${PRELUDE}exec ${text.replace(/^npx fleet /, `node ${JSON.stringify(join(ROOT, 'bin', 'fleet.js'))} `)}`], { cwd: WALK, env: env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      // The whole group: npm start's node, a virtual board's processes.
      process.kill(-child.pid!, 'SIGINT');
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

async function waitFor(bg: Background, ready: RegExp, count = 1, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const matches = bg.output().match(new RegExp(ready.source, ready.flags.includes('g') ? ready.flags : ready.flags + 'g')) ?? [];
    if (matches.length >= count) return;
    if (bg.child.exitCode !== null || Date.now() > deadline) throw new Error(`not ready (${ready}): ${bg.output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

afterAll(async () => {
  for (const bg of [kept.board, kept.cloud]) await bg?.stop();
  rmSync(WALK, { recursive: true, force: true });
}, 90_000);

const commands = readmeCommands(join(ROOT, 'README.md'));

describe('the README, walked', () => {
  it('has commands to walk', () => {
    expect(commands.length).toBeGreaterThan(40);
  });

  it('runs every command as written, in order, or says why not', async () => {
    cloudPort = await freePort();
    const skipped: string[] = [];
    const failures: string[] = [];
    for (const c of commands as ReadmeCommand[]) {
      const text = withoutComment(c.text);
      const rule = ruleFor(text);
      const where = `README.md:${c.line} (${c.section})`;
      if (rule?.skip) {
        skipped.push(`${where}: ${text}  ← ${rule.skip}`);
        continue;
      }
      if (text === 'npm start' && kept.cloud) continue; // the same cloud, started by an earlier line
      if (rule?.background) {
        const { ready, keep, boards } = rule.background;
        if (keep === 'board' && kept.board) {
          expect(await kept.board.stop(), `${where}: the earlier virtual board stops cleanly`).toBe(0);
          kept.board = undefined;
          boardRfc2217 = undefined;
        }
        const bg = startBackground(rewrite(text));
        try {
          await waitFor(bg, ready, boards ?? 1);
        } catch (err) {
          failures.push(`${where}: ${text}\n${(err as Error).message}`);
          await bg.stop();
          continue;
        }
        if (keep === 'cloud') kept.cloud = bg;
        else if (keep === 'board') {
          kept.board = bg;
          boardRfc2217 = /^board source .*rfc2217=(rfc2217:\/\/\S+)/m.exec(bg.output())?.[1];
        } else {
          const code = await bg.stop();
          if (code !== 0) failures.push(`${where}: ${text}\nstopped with exit ${code}: ${bg.output().slice(-1500)}`);
        }
        continue;
      }
      const r = runForeground(rewrite(text), rule?.terminal);
      if (r.status !== 0) failures.push(`${where}: ${text}\nexit ${r.status}: ${r.output.slice(-1500)}`);
    }
    // npx resolves the project's own bin, as the README's lines assume.
    const viaNpx = spawnSync('npx', ['--no-install', 'fleet', '--version'], { cwd: WALK, env: env(), encoding: 'utf8', timeout: 120_000 });
    if (viaNpx.status !== 0) failures.push(`npx --no-install fleet --version: exit ${viaNpx.status}: ${viaNpx.stderr}`);
    process.stdout.write(`README walk: ${commands.length} commands, ${skipped.length} not run:\n${skipped.map((s) => `  ${s}`).join('\n')}\n`);
    expect(failures, failures.join('\n\n')).toEqual([]);
  }, 1_500_000);
});
