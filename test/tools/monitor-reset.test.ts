// The board commands on day one (issue 36), against one virtual board that `fleet virtual` runs in
// another process: the README's CI line `fleet monitor -p … --until 'boot: controller' --timeout 60`
// run as the README writes it (the monitor resets the board as it opens the port; --no-reset keeps
// it as it is); a port the monitor holds is refused to a second command with a sentence that says
// so (exit 5); `fleet efuse summary` hard-resets the board at the end (a `fleet console status` right
// after answers) or, with --after no-reset, leaves it in the ROM loader and says so; `fleet console`'s
// exit codes as the README lists them.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PORT_IN_USE } from '../../harness/transport/transport.ts';
import { consoleExitSentence } from '../../tools/commands/console.ts';
import { FLEET_JS, ROOT, runFleet } from '../helpers/fleet-cli.ts';
import { virtualBoardPerFile } from '../helpers/fleet-virtual.ts';

const BOOT_LINE = /^LOG INFO boot: controller 5c0e1a00-0000-4000-8000-000000000001 firmware \S+ \(debug\)$/;
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const held = virtualBoardPerFile();

/** A README line run by sh as written, `npx fleet` being this checkout's bin/fleet.js and `/dev/ttyUSB0` the board's port. */
function runReadmeLine(line: string, port: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const command = line.replace(/^npx fleet /, `'${process.execPath}' '${FLEET_JS}' `).replace('/dev/ttyUSB0', port);
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', command], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A process started now, its output collected, until it is stopped. */
function started(args: string[]) {
  const child = spawn(process.execPath, [FLEET_JS, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    exited,
    out: () => out,
    err: () => err,
    async seen(pattern: RegExp, which: 'out' | 'err', timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(which === 'out' ? out : err)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never printed ${pattern} (exit ${child.exitCode}):\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

describe('fleet monitor resets the board as it opens the port', () => {
  it("the README's CI line, as written, sees the boot and exits 0", { timeout: 150_000 }, async () => {
    const line = README.split('\n').find((l) => l.startsWith('npx fleet monitor ') && l.includes('--until'));
    expect(line).toBeDefined();
    const ci = line!.replace(/\s+#.*$/, '');
    expect(ci).toBe("npx fleet monitor -p /dev/ttyUSB0 --until 'boot: controller' --timeout 60 < /dev/null");
    const r = await runReadmeLine(ci, held.board.rfc2217);
    expect(r.stderr).toContain('monitor: resetting the board (--no-reset keeps it as it is)\n');
    expect(r.code).toBe(0);
    // The boot from its first line (the ROM's reset reason) to the line it waited for, the last one written.
    expect(r.stdout).toMatch(/^rst:0x1 \(POWERON\),boot:0x8 \(SPI_FAST_FLASH_BOOT\)$/m);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toMatch(BOOT_LINE);
  });

  it('--no-reset keeps the board as it is: no reset, so no boot to see', { timeout: 120_000 }, async () => {
    const r = await runFleet(['monitor', '-p', held.board.rfc2217, '--no-reset', '--until', '^rst:', '--timeout', '3'], { timeoutMs: 60_000 });
    expect(r.stderr).not.toContain('resetting');
    expect(r.stderr).toContain('monitor: no line matched /^rst:/ within 3 s\n');
    expect(r.code).toBe(1);
  });

  it('a board of fleet virtual on its pseudo-terminal: says it cannot reset it there and where it can', { timeout: 120_000 }, async () => {
    const r = await runFleet(['monitor', '-p', held.board.console, '--timeout', '1'], { timeoutMs: 60_000 });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`monitor: ${held.board.console} has no modem lines (a pseudo-terminal?): reset the board with its boot control (a board of fleet virtual: its rfc2217:// port carries DTR and RTS)\n`);
  });
});

describe('a port the monitor holds', () => {
  for (const which of ['rfc2217', 'console'] as const) {
    it(`is refused to fleet console with exit 5 and a sentence that says who holds it and what to do (${which})`, { timeout: 120_000 }, async () => {
      const port = held.board[which];
      const m = started(['monitor', '-p', port, '--no-reset', '--no-colour']);
      try {
        await m.seen(/; no terminal: no keys/, 'err');
        const r = await runFleet(['console', '-p', port, 'reboot']);
        expect(r.code).toBe(5);
        expect(r.stderr).toContain(`cannot open ${port}: ${PORT_IN_USE}`);
        expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      } finally {
        m.child.kill('SIGTERM');
        await m.exited;
      }
    });
  }
});

describe('fleet efuse --after', () => {
  it('hard-reset by default: says the board runs its firmware again, and fleet console status answers at once', { timeout: 150_000 }, async () => {
    const s = await runFleet(['efuse', 'summary', '-p', held.board.rfc2217], { timeoutMs: 90_000 });
    expect(s.code).toBe(0);
    expect(s.stderr).toMatch(/^efuse: hard reset: the board runs its firmware again \(controller \S+, debug\); --after no-reset leaves it in the ROM loader\n$/);
    const status = await runFleet(['console', '-p', held.board.rfc2217, 'status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^OK \{"uuid":"5c0e1a00-0000-4000-8000-000000000001"/);
  });

  it('no-reset: says the board is left in the ROM download mode; fleet console then exits 6 saying why; the monitor brings it back', { timeout: 180_000 }, async () => {
    const s = await runFleet(['efuse', 'summary', '-p', held.board.rfc2217, '--after', 'no_reset', '--format', 'json'], { timeoutMs: 90_000 });
    expect(s.code).toBe(0);
    expect(JSON.parse(s.stdout)).toMatchObject({ revision: 'v0.2' });
    expect(s.stderr).toBe('efuse: the board is left in the ROM download mode (--after no-reset): reset it to run its firmware (fleet monitor resets it as it opens the port)\n');
    await held.virtual.line(/^board source .* mode=download$/);
    const silent = await runFleet(['console', '-p', held.board.rfc2217, 'status', '--timeout', '2']);
    expect(silent.code).toBe(6);
    expect(silent.stderr).toContain(`is the firmware running? A board left in its ROM download mode (fleet efuse … --after no-reset) answers nothing; fleet monitor -p ${held.board.rfc2217} resets it`);
    const back = await runFleet(['monitor', '-p', held.board.rfc2217, '--until', 'boot: controller', '--timeout', '60'], { timeoutMs: 90_000 });
    expect(back.code).toBe(0);
    expect((await runFleet(['console', '-p', held.board.rfc2217, 'status'])).code).toBe(0);
  });

  it('a bad --after is a usage error that names the two', async () => {
    const r = await runFleet(['efuse', 'summary', '-p', held.board.rfc2217, '--after', 'soft-reset']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("option '--after <action>' argument 'soft-reset' is invalid. must be hard-reset (the board runs its firmware again) or no-reset (it stays in the ROM loader): soft-reset");
  });
});

describe("fleet console's exit codes", () => {
  it('the README lists them as the code defines them', () => {
    expect(README.replace(/\n/g, ' ')).toContain(consoleExitSentence());
  });

  it('exit 2 for a usage error', () => {
    const r = spawnSync(process.execPath, [FLEET_JS, 'console', '-p', held.board.rfc2217, 'status', '--timeout', 'soon'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(2);
  });
});
