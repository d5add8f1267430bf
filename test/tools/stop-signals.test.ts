// Long-running commands end within seconds of SIGINT or SIGTERM, whatever holds them: `fleet virtual`
// with a raw TCP client on its broker (that one held it for ever), an RFC 2217 client and an HTTP
// keep-alive connection, or a signal while its boards start; `fleet bench` in the middle of a
// scenario. Afterwards the process is gone, its ports refuse connections, its helper processes
// (socat, the firmware's loader processes) are gone and its work folder is removed.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FLEET_JS, ROOT } from '../helpers/fleet-cli.ts';
import { startVirtual, TWO_BOARD_RIG } from '../helpers/fleet-virtual.ts';
import { descendants, stillRunning } from '../helpers/processes.ts';

const GRACE_MS = 5000;
/** Stopped after each test whatever its outcome, last started first, so that a failing test leaves nothing behind. */
const started: { stop(signal: NodeJS.Signals, timeoutMs: number): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const p of started.splice(0).reverse()) await p.stop('SIGTERM', 10_000);
});

async function until(what: string, test: () => unknown, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function open(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host, port }, () => resolve(s));
    s.once('error', reject);
  });
}

/** How a connection to host:port ends now: 'refused' once nothing listens there. */
function probe(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.once('connect', () => (s.destroy(), resolve('accepted')));
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' ? 'refused' : String(err.code)));
  });
}

describe('fleet virtual', () => {
  it('SIGTERM with clients on its broker, its RFC 2217 port and its HTTP listener: gone within seconds, ports free', { timeout: 120_000 }, async () => {
    const v = startVirtual();
    started.push(v);
    const board = await v.board('source');
    const broker = /broker mqtt:\/\/127\.0\.0\.1:(\d+)/.exec(v.stderr)!;
    const work = dirname(board.console);
    const rfc = new URL(board.rfc2217.replace('rfc2217:', 'http:'));
    const eth = new URL(board.ethernet!);
    const held: Socket[] = [];
    // A client that never sends CONNECT (a port scanner, a stuck client), the way nc would sit there.
    held.push(await open('127.0.0.1', Number(broker[1])));
    held.push(await open(rfc.hostname, Number(rfc.port)));
    const agent = new Agent({ keepAlive: true });
    await new Promise<void>((resolve) => get({ host: eth.hostname, port: eth.port, path: '/api/status', agent }, (res) => (res.resume(), res.once('end', resolve))));
    for (const s of held) s.on('error', () => undefined);
    const helpers = descendants(v.child.pid!).filter((p) => /socat|virtual-esp32\/loader /.test(p.command));
    expect(helpers.map((p) => p.command.split(' ')[0]!.split('/').at(-1)).sort()).toEqual(['loader', 'socat']);

    const stopped = await v.stop('SIGTERM', 15_000);
    agent.destroy();
    for (const s of held) s.destroy();
    expect(stopped).toMatchObject({ code: 0, signal: null });
    expect(stopped.ms).toBeLessThan(GRACE_MS);
    expect(v.stderr).toMatch(/virtual: stopping\n$/);
    expect(await probe('127.0.0.1', Number(broker[1]))).toBe('refused');
    expect(await probe(rfc.hostname, Number(rfc.port))).toBe('refused');
    expect(await probe(eth.hostname, Number(eth.port))).toBe('refused');
    await until('socat and the firmware process gone', () => stillRunning(helpers).length === 0, 3000);
    expect(existsSync(work)).toBe(false);
  });

  it('SIGINT while a board starts: its pty, its firmware process and its folder do not outlive the command', { timeout: 120_000 }, async () => {
    const v = startVirtual();
    started.push(v);
    await until('the start of board source', () => /virtual: starting board source \(work folder (\S+)\)/.test(v.stderr));
    const work = /work folder (\S+)\)/.exec(v.stderr)![1]!;
    // The board's pseudo-terminal pair exists: socat runs; the firmware has not printed its line yet.
    await until('the board pty', () => existsSync(join(work, 'source.tty')), 30_000);
    const helpers = descendants(v.child.pid!).filter((p) => /socat|virtual-esp32\/loader /.test(p.command));
    expect(helpers.some((p) => p.command.startsWith('socat'))).toBe(true);
    const stopped = await v.stop('SIGINT', 15_000);
    expect(stopped).toMatchObject({ code: 0, signal: null });
    expect(stopped.ms).toBeLessThan(GRACE_MS + 5000);
    await until('socat and the firmware process gone', () => stillRunning(helpers).length === 0, 3000);
    expect(existsSync(work)).toBe(false);
  });
});

describe('fleet virtual with a board in ROM download mode', () => {
  /** A board put in the ROM loader as a user would: fleet efuse summary --after no-reset. */
  async function inDownloadMode() {
    const v = startVirtual();
    started.push(v);
    const board = await v.board('source');
    const efuse = spawn(process.execPath, [FLEET_JS, 'efuse', 'summary', '-p', board.rfc2217, '--after', 'no-reset'], { cwd: ROOT, stdio: 'ignore' });
    expect(await new Promise((r) => efuse.once('exit', r))).toBe(0);
    await v.line(/^board source .* mode=download$/);
    const helpers = descendants(v.child.pid!).filter((p) => /socat|virtual-esp32\/loader /.test(p.command));
    expect(helpers.some((p) => p.command.startsWith('socat'))).toBe(true);
    return { v, work: dirname(board.console), helpers };
  }

  it('SIGTERM: stops within its grace (exit 0, not a forced exit), its helpers gone, its work folder removed', { timeout: 180_000 }, async () => {
    const { v, work, helpers } = await inDownloadMode();
    expect(existsSync(work)).toBe(true);
    const stopped = await v.stop('SIGTERM', 30_000);
    expect(v.stderr).not.toContain('exiting now');
    expect(stopped).toMatchObject({ code: 0, signal: null });
    await until('socat and the firmware process gone', () => stillRunning(helpers).length === 0, 5000);
    expect(existsSync(work)).toBe(false);
  });

  it('a second signal forces the exit: the work folder and socat do not outlive it', { timeout: 180_000 }, async () => {
    const { v, work, helpers } = await inDownloadMode();
    const exited = new Promise<number | null>((r) => v.child.once('exit', (code) => r(code)));
    v.child.kill('SIGINT');
    v.child.kill('SIGTERM');
    const code = await exited;
    // Either the stop was done before the second signal was read (0), or the second forced it (143).
    expect([0, 143]).toContain(code);
    if (code === 143) expect(v.stderr).toContain('virtual: SIGTERM again while closing');
    await until('socat gone', () => stillRunning(helpers.filter((p) => p.command.startsWith('socat'))).length === 0, 5000);
    expect(existsSync(work)).toBe(false);
  });
});

describe('fleet bench', () => {
  it('SIGINT in the middle of a scenario: the scenario is abandoned, the bench closed, exit 130, no report', { timeout: 180_000 }, async () => {
    const report = join(mkdtempSync(join(tmpdir(), 'stop-signals-')), 'report');
    started.push({ stop: async () => rmSync(dirname(report), { recursive: true, force: true }) });
    const bench = spawn(process.execPath, [FLEET_JS, 'bench', TWO_BOARD_RIG, '--scenario', 'controller-ok-backup', '--report', report], { cwd: ROOT });
    let stderr = '';
    bench.stderr.on('data', (c) => (stderr += c));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => bench.once('exit', (code, signal) => r({ code, signal })));
    started.push({
      async stop(signal: NodeJS.Signals, timeoutMs: number) {
        if (bench.exitCode !== null || bench.signalCode !== null) return;
        bench.kill(signal);
        const timer = setTimeout(() => bench.kill('SIGKILL'), timeoutMs);
        await exited;
        clearTimeout(timer);
      },
    });
    // Two boards up: both pseudo-terminals and both firmware processes running.
    let helpers: { pid: number; command: string }[] = [];
    await until('two boards running', () => {
      helpers = descendants(bench.pid!).filter((p) => /socat|virtual-esp32\/loader /.test(p.command));
      return helpers.filter((p) => p.command.includes('virtual-esp32/loader ')).length >= 2;
    }, 120_000);
    const t0 = Date.now();
    bench.kill('SIGINT');
    const timer = setTimeout(() => bench.kill('SIGKILL'), 15_000);
    const end = await exited;
    clearTimeout(timer);
    expect(end).toEqual({ code: 130, signal: null });
    expect(Date.now() - t0).toBeLessThan(GRACE_MS);
    expect(stderr).toMatch(/bench: SIGINT: stopping the scenario under way and closing the bench\n/);
    expect(stderr).toMatch(/bench: interrupted after 1 of 1 scenarios; no report written\n$/);
    await until('socat and the firmware processes gone', () => stillRunning(helpers).length === 0, 3000);
    expect(existsSync(join(report, 'index.html'))).toBe(false);
  });
});
