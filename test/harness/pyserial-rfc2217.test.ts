// Stock serial tools on a virtual board's RFC 2217 port: Debian's python3-serial (pyserial 3.5),
// whose RFC 2217 client waits for the answer to each SET-CONTROL, so the classic reset's DTR and
// RTS reach the server at least 50 ms apart. A small ROM client written for the test
// (test/fixtures/pyserial/rom_client.py) resets the board into download mode with esptool's
// classic sequence through pyserial's own dtr/rts setters, syncs, reads the chip magic and the MAC,
// writes 8 KB and checks SPI_FLASH_MD5 against hashlib; a port left at 921600 by one session is
// opened again at 115200 (SET-BAUDRATE answered with the rate asked for), where the chip, still at
// 921600, hears garbage until it is reset; and pyserial's miniterm shows the app's console.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { loadRig } from '../../harness/rig.ts';
import { VirtualBoard } from '../../harness/virtual-board.ts';

const rig = loadRig(fileURLToPath(new URL('../../harness/rigs/two-board.json', import.meta.url)));
/** Debian's interpreter, whose python3-serial package the test is about (a pyenv python3 on PATH has its own modules). */
const PYTHON = '/usr/bin/python3';
const ROM_CLIENT = fileURLToPath(new URL('../fixtures/pyserial/rom_client.py', import.meta.url));
let dir: string;
let board: VirtualBoard;

/** A Python process, killed if it outlives its time; its exit code and output. */
function python(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(PYTHON, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  const version = await python(['-c', 'import serial; print(serial.__version__)'], 10_000);
  if (version.code !== 0) throw new Error(`python3-serial is needed (apt-get install python3-serial): ${version.stderr.trim()}`);
  dir = mkdtempSync(join(tmpdir(), 'pyserial-rfc2217-'));
  board = new VirtualBoard(structuredClone(rig.boards[0]!), { air: new VirtualAir(), workDir: dir });
  await board.start();
}, 120_000);
afterAll(async () => {
  await board?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("pyserial's RFC 2217 client on a virtual board", () => {
  it('resets into download mode with the classic sequence, syncs, reads magic and MAC, writes 8 KB and verifies its MD5', { timeout: 60_000 }, async () => {
    expect(board.mode).toBe('app');
    const r = await python([ROM_CLIENT, 'flash', board.rfc2217Url, '0x7f0000', '8192'], 45_000);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { magic: number; mac: string; written: number; md5_rom: string; md5_local: string };
    expect(out.magic).toBe(0x9); // ESP32-S3
    expect(out.mac).toBe(board.spec.wifiMac.toUpperCase());
    expect(out.written).toBe(8192);
    expect(out.md5_rom).toMatch(/^[0-9a-f]{32}$/);
    expect(out.md5_rom).toBe(out.md5_local);
    await board.settled();
    expect(board.mode).toBe('download');
  });

  it('opens the port at 115200 after a session at 921600: the chip hears garbage until the reset brings it back to 115200', { timeout: 60_000 }, async () => {
    const r = await python([ROM_CLIENT, 'baud', board.rfc2217Url], 45_000);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ fast_sync: true, reopened_baud: 115200, mismatched_sync: false, after_reset_sync: true, magic: 0x9 });
  });

  it("shows the app's console in miniterm", { timeout: 90_000 }, async () => {
    // Out of download mode with the bench's reset control, miniterm opened, then the board reset again.
    await board.reset();
    expect(board.mode).toBe('app');
    const child = spawn('socat', ['-', `SYSTEM:${PYTHON} -m serial.tools.miniterm "$MINITERM_URL" 115200,pty,setsid,ctty,stderr`], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', MINITERM_URL: board.rfc2217Url },
    });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    try {
      const until = async (pattern: RegExp, ms: number) => {
        const deadline = Date.now() + ms;
        while (!pattern.test(out)) {
          if (Date.now() > deadline || child.exitCode !== null) throw new Error(`miniterm never showed ${pattern}:\n${out}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      await until(/--- Miniterm on rfc2217:\/\/127\.0\.0\.1:\d+\s+115200,8,N,1 ---/, 15_000);
      await board.reset();
      await until(new RegExp(`LOG INFO boot: ${board.spec.role} ${board.spec.uuid} firmware \\S+ \\(\\w+\\)`), 60_000);
      expect(out).toMatch(/ESP-ROM:esp32s3-20210327/);
      // Ctrl-] ends miniterm.
      child.stdin.write('\x1d');
      await until(/--- exit ---/, 10_000);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
