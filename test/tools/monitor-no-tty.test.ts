// `fleet monitor` without a terminal (CI, a pipe, /dev/null): no keys are read, an empty or closed
// standard input is not a quit; it writes the board's lines as they come and runs until SIGINT or
// SIGTERM, --timeout, or --until (exit 0 on a matching line, 1 when the time-out comes first).
import { spawn, type ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { FLEET_JS, ROOT, runFleet } from '../helpers/fleet-cli.ts';
import { virtualBoardPerFile } from '../helpers/fleet-virtual.ts';

const BOOT_LINE = /^LOG INFO boot: controller 5c0e1a00-0000-4000-8000-000000000001 firmware \S+ \(debug\)$/m;
const held = virtualBoardPerFile();

interface Monitor {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<{ code: number | null; ms: number }>;
  seen: (pattern: RegExp, which?: 'out' | 'err', timeoutMs?: number) => Promise<void>;
}

/** A monitor whose standard input is /dev/null ('ignore') or a pipe closed at once ('closed'). */
function monitor(args: string[], stdin: 'ignore' | 'closed'): Monitor {
  const t0 = Date.now();
  const child = spawn(process.execPath, [FLEET_JS, 'monitor', '-p', held.board.rfc2217, '--no-colour', ...args], { cwd: ROOT, stdio: [stdin === 'ignore' ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  if (stdin === 'closed') child.stdin!.end();
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (err += c));
  const exited = new Promise<{ code: number | null; ms: number }>((r) => child.once('exit', (code) => r({ code, ms: Date.now() - t0 })));
  return {
    child,
    out: () => out,
    err: () => err,
    exited,
    async seen(pattern, which = 'out', timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(which === 'out' ? out : err)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the monitor never printed ${pattern} (exit ${child.exitCode}):\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** Reboots the board through its other port (the console's pseudo-terminal), as a CI step would. */
async function rebootBoard(): Promise<void> {
  const r = await runFleet(['console', '-p', held.board.console, 'reboot']);
  expect(r.stdout).toBe('OK {"rebooting":true}\n');
}

describe('fleet monitor without a terminal', () => {
  it('standard input from /dev/null: waits with --until for the boot line, exit 0, the lines before it written', { timeout: 120_000 }, async () => {
    // --no-reset: the boot comes from a reboot by another port, as a CI step would do (the monitor's own reset: monitor-reset.test.ts).
    const m = monitor(['--no-reset', '--until', 'LOG INFO boot: controller', '--timeout', '90'], 'ignore');
    await m.seen(/no terminal: no keys, SIGINT or SIGTERM stops it\n/, 'err');
    await rebootBoard();
    expect((await m.exited).code).toBe(0);
    expect(m.out()).toMatch(/^rst:0x\w+ .*\n[\s\S]*I \(\d+\) boot: Loaded app from partition at offset 0x10000\n/m);
    // It stops at the matching line: that line is the last one written.
    expect(m.out().trimEnd().split('\n').at(-1)).toMatch(BOOT_LINE);
  });

  it('a closed pipe is not a quit: it runs, writes lines as they come, and ends on SIGTERM with exit 0', { timeout: 120_000 }, async () => {
    const m = monitor(['--no-reset'], 'closed');
    await m.seen(/; no terminal: no keys/, 'err');
    await new Promise((r) => setTimeout(r, 1500));
    expect(m.child.exitCode).toBeNull();
    await rebootBoard();
    await m.seen(BOOT_LINE);
    expect(m.child.exitCode, 'still running after the line came').toBeNull();
    m.child.kill('SIGTERM');
    const { code } = await m.exited;
    expect(code).toBe(0);
  });

  it('--until that never matches: exit 1 at --timeout, saying so', { timeout: 60_000 }, async () => {
    const m = monitor(['--until', 'no such line', '--timeout', '2'], 'closed');
    const { code, ms } = await m.exited;
    expect(code).toBe(1);
    expect(ms).toBeGreaterThanOrEqual(2000);
    expect(m.err()).toMatch(/monitor: no line matched \/no such line\/ within 2 s\n$/);
  });

  it('--timeout alone: a capture window, exit 0', { timeout: 60_000 }, async () => {
    const m = monitor(['--timeout', '1'], 'ignore');
    const { code, ms } = await m.exited;
    expect(code).toBe(0);
    expect(ms).toBeGreaterThanOrEqual(1000);
  });

  it('a bad --until is a usage error', async () => {
    const r = await runFleet(['monitor', '-p', held.board.rfc2217, '--until', '(']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("option '--until <regex>' argument '(' is invalid. not a regular expression");
  });

  it('--help documents --until, --timeout and what happens without a terminal', async () => {
    const help = (await runFleet(['monitor', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('--until <regex> stop at the first line that matches (exit 0); exit 1 if --timeout or the end of the port comes first');
    expect(help).toContain('--timeout <seconds> stop after this long (exit 0, or 1 with --until)');
    expect(help).toContain('Without a terminal on standard input (CI, a pipe, /dev/null) no keys are read');
  });
});
