// The board commands as a user runs them, against a virtual board that `fleet virtual` runs in
// another process and that they reach only through what it prints (its RFC 2217 URL, its console
// pseudo-terminal, its Ethernet address): `fleet console`, `fleet flash` (an app image, and its
// failures with their exit codes), `fleet monitor` with a log file and its reset key.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_VARIANT, firmwareImage } from '../../firmware/sdk-host/firmware-image.ts';
import { fleetOnTerminal } from '../helpers/terminal.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fleetJs = join(root, 'bin', 'fleet.js');
const rig = join(root, 'harness', 'rigs', 'two-board.json');
let dir: string;
let virtual: ChildProcessWithoutNullStreams;
let stdout = '';
let stderr = '';
let board: { console: string; rfc2217: string; ethernet: string };

function fleet(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [fleetJs, ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function lineMatching(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = [...stdout.split('\n')].reverse().map((l) => pattern.exec(l)).find(Boolean);
    if (m) return m;
    if (Date.now() > deadline || virtual.exitCode !== null) throw new Error(`fleet virtual never printed ${pattern}: ${stdout}\n${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'board-commands-'));
  // The rig's source is a debug board: the build kind is compiled into the firmware, as on a chip,
  // so the image flashed onto it is a debug build.
  writeFileSync(join(dir, 'fw.bin'), await firmwareImage('2026.08.01', { variant: { ...DEFAULT_VARIANT, build: 'debug' } }));
  virtual = spawn(process.execPath, [fleetJs, 'virtual', rig, 'source'], { cwd: root });
  virtual.stdout.on('data', (c) => (stdout += c));
  virtual.stderr.on('data', (c) => (stderr += c));
  const m = await lineMatching(/^board source console=(\S+) rfc2217=(rfc2217:\/\/127\.0\.0\.1:\d+) ethernet=(http:\/\/127\.\d+\.\d+\.\d+:\d+)$/);
  board = { console: m[1]!, rfc2217: m[2]!, ethernet: m[3]! };
}, 120_000);

afterAll(async () => {
  if (virtual && virtual.exitCode === null) {
    const exited = new Promise((r) => virtual.once('exit', r));
    virtual.kill('SIGINT');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('fleet virtual', () => {
  it('prints one line per board that the other commands and curl can use', async () => {
    expect(board.console).toMatch(/\/source\.tty$/);
    const r = await fetch(`${board.ethernet}/api/status`);
    expect(r.status).toBe(401); // the device-local API, which wants a visual-token
  });
});

describe('fleet console', () => {
  it('sends a command over RFC 2217 and over the pseudo-terminal; ERR exits 1', () => {
    const overRfc = fleet('console', '--port', board.rfc2217, 'status');
    expect(overRfc.status).toBe(0);
    expect(JSON.parse(overRfc.stdout.replace(/^OK /, ''))).toMatchObject({ uuid: '5c0e1a00-0000-4000-8000-000000000001', role: 'controller', firmware_version: '2026.01.01' });
    const overPty = fleet('console', '--port', board.console, 'fault', 'record', 'oops');
    expect(overPty).toMatchObject({ status: 1, stdout: 'ERR usage usage: fault record <controllers|clients> <uuid> | fault memory | fault throw | fault hang | fault clear\n' });
  });

  it('exits 5 when the port cannot be opened', () => {
    const r = fleet('console', '--port', join(dir, 'no-such-tty'), 'status');
    expect(r.status).toBe(5);
    expect(r.stderr).toContain(`cannot open ${join(dir, 'no-such-tty')}`);
  });
});

describe('fleet flash', () => {
  it('writes an app image over RFC 2217, verifies, resets, and ends with the version that booted', { timeout: 120_000 }, () => {
    const r = fleet('flash', '--port', board.rfc2217, join(dir, 'fw.bin'));
    expect(r.stderr).toContain('Hash of data verified.');
    expect(r.stderr).toMatch(/\[#{30}\] 100% 1\/1 fw\.bin\n/);
    expect(r.stderr).toContain('flash: ESP32-S3 (QFN56) (revision v0.2), MAC 24:0A:C4:10:00:01, 8 MB flash, verified');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('booted 2026.08.01');
    expect(r.status).toBe(0);
    expect(fleet('console', '--port', board.rfc2217, 'status').stdout).toContain('"firmware_version":"2026.08.01"');
  });

  it('exits 7 for the wrong chip, 8 for an image that does not fit, 2 for a bad offset, nothing written', { timeout: 120_000 }, () => {
    const wrong = fleet('flash', '--port', board.rfc2217, '--chip', 'esp32c3', join(dir, 'fw.bin'));
    expect(wrong.status).toBe(7);
    expect(wrong.stderr).toContain(`fleet: the board on ${board.rfc2217} is an ESP32-S3, not an ESP32-C3`);
    const big = new Uint8Array(3 * 1024 * 1024 + 4096);
    big[0] = 0xe9;
    big[12] = 9; // chip id: ESP32-S3
    writeFileSync(join(dir, 'big.bin'), big);
    const tooBig = fleet('flash', '--port', board.rfc2217, '0x10000', join(dir, 'big.bin'));
    expect(tooBig.status).toBe(8);
    expect(tooBig.stderr).toContain(`fleet: big.bin is ${big.length} bytes; partition ota_0 at 0x10000 holds 3145728 bytes`);
    const badOffset = fleet('flash', '--port', board.rfc2217, '0x10001', join(dir, 'fw.bin'));
    expect(badOffset).toMatchObject({ status: 2, stderr: 'fleet: offset 0x10001 is not on a 4 KB sector boundary\n' });
  });

  it('exits 10 when the image is written and verified but the bootloader refuses it; a good one boots again', { timeout: 120_000 }, async () => {
    const corrupt = readFileSync(join(dir, 'fw.bin'));
    corrupt[0x3000] = corrupt[0x3000]! ^ 0x40;
    writeFileSync(join(dir, 'corrupt.bin'), corrupt);
    const r = fleet('flash', '--port', board.rfc2217, join(dir, 'corrupt.bin'));
    expect(r.stderr).toContain('Hash of data verified.');
    expect(r.stderr).toMatch(/fleet: the board did not boot: E \(\d+\) boot: No bootable app partitions in the partition table/);
    expect(r.status).toBe(10);
    await lineMatching(/^board source .* mode=halted$/);
    expect(fleet('flash', '--port', board.rfc2217, join(dir, 'fw.bin')).stdout).toMatch(/booted 2026\.08\.01\n$/);
  });
});

describe('fleet flash without a board', () => {
  it('exits 6 when nothing answers like a ROM, and says a port without modem lines cannot reset', { timeout: 60_000 }, async () => {
    const { openPtyPair } = await import('../../harness/pty.ts');
    const pty = await openPtyPair(dir, 'lonely');
    try {
      const silent = fleet('flash', '--port', pty.harnessEnd, '--reset-method', 'none', join(dir, 'fw.bin'));
      expect(silent.status).toBe(6);
      expect(silent.stderr).toContain(`fleet: no answer from the ROM bootloader on ${pty.harnessEnd} (reset method none): is it the board's port, is the board powered, does the reset method fit its wiring? (esptool-js: Failed to connect with the device)`);
      const noLines = fleet('flash', '--port', pty.harnessEnd, '--reset-method', 'classic', join(dir, 'fw.bin'));
      expect(noLines.status).toBe(6);
      expect(noLines.stderr).toContain('has no modem lines (a pseudo-terminal?): reset the board with its boot control; hold BOOT, press RST and flash with --reset-method none');
    } finally {
      await pty.close();
    }
  });
});

describe('fleet monitor', () => {
  it('on a terminal: shows the console, sends typed lines, resets the board on Ctrl-T Ctrl-R, writes the log, quits on Ctrl-]', { timeout: 120_000 }, async () => {
    const log = join(dir, 'monitor.log');
    // --no-reset: the line typed first must not land in a boot (the reset on open: monitor-reset.test.ts).
    const monitor = fleetOnTerminal(['monitor', '--no-reset', '--no-colour', '--log', log], { ESPPORT: board.rfc2217 });
    await monitor.seen(/monitor: rfc2217:\/\/127\.0\.0\.1:\d+ at 115200 baud, reset classic, log .*; Ctrl-T Ctrl-R reset, Ctrl-T Ctrl-P download mode, Ctrl-\] quit/);
    monitor.type('status\r');
    await monitor.seen(/^OK \{"uuid":"5c0e1a00-0000-4000-8000-000000000001"/m);
    monitor.type(Uint8Array.of(0x14, 0x12)); // Ctrl-T Ctrl-R
    await monitor.seen(/monitor: resetting the board\n/);
    await monitor.seen(/^rst:0x1 \(POWERON\),boot:0x8 \(SPI_FAST_FLASH_BOOT\)$/m);
    await monitor.seen(/^LOG INFO boot: controller 5c0e1a00-0000-4000-8000-000000000001 firmware 2026\.08\.01 \(debug\)$/m);
    monitor.type(Uint8Array.of(0x1d)); // Ctrl-]
    expect(await monitor.exited).toBe(0);
    expect(readFileSync(log, 'utf8')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z LOG INFO boot: controller .* firmware 2026\.08\.01 \(debug\)$/m);
  });
});

describe('fleet virtual, stopping', () => {
  it('stops its boards and exits 0 on Ctrl-C', async () => {
    const exited = new Promise<number | null>((r) => virtual.once('exit', r));
    virtual.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/virtual: stopping\n$/);
  });
});
