// `fleet flash --rig`: every board of a rig flashed at once, one connection per port. Here two
// virtual boards reached only through their RFC 2217 ports, as boards of kind rfc2217, and a third
// port where nothing listens: the two are written, verified and booted while the third fails; the
// summary names it and the exit code says not every board succeeded. Then a board whose chip is not
// the rig's fails alone with the same code. Bad rigs and options get their sentences and codes.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { DEFAULT_VARIANT, firmwareImage } from '../../firmware/sdk-host/firmware-image.ts';
import { describeWritten } from '../../harness/flash/flash-board.ts';
import { loadRig } from '../../harness/rig.ts';
import { VirtualBoard } from '../../harness/virtual-board.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const twoBoard = join(root, 'harness', 'rigs', 'two-board.json');
const rig = loadRig(twoBoard);
let dir: string;
const boards: VirtualBoard[] = [];
let closedPort: number;

/**
 * `fleet …` in a child process (asynchronously: the boards answer from this process); its pipes are
 * not terminals, so the progress comes as plain lines. Killed if it outlives the test's bound.
 */
function fleet(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(root, 'bin', 'fleet.js'), ...args], { cwd: root });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
  return new Promise((resolve) => child.on('close', (status) => (clearTimeout(timer), resolve({ status, stdout, stderr }))));
}

function rigFile(name: string, entries: { id: string; port: string; chip?: string }[]): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ name, boards: entries.map((e) => ({ role: 'controller', kind: 'rfc2217', ...e })) }));
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flash-rig-'));
  for (const spec of rig.boards) {
    const board = new VirtualBoard(structuredClone(spec), { air: new VirtualAir(), workDir: dir });
    boards.push(board);
    await board.start();
  }
  writeFileSync(join(dir, 'fw.bin'), await firmwareImage('2026.10.01', { variant: { ...DEFAULT_VARIANT, build: 'production' } }));
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closedPort = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
}, 120_000);
afterAll(async () => {
  for (const b of boards) await b.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('fleet flash --rig', () => {
  it('flashes the boards at once; one whose port is closed fails alone, named in the summary, exit 11', { timeout: 180_000 }, async () => {
    const path = rigFile('three', [
      { id: 'left', port: boards[0]!.rfc2217Url },
      { id: 'gone', port: `rfc2217://127.0.0.1:${closedPort}` },
      { id: 'right', port: boards[1]!.rfc2217Url },
    ]);
    const r = await fleet('flash', '--rig', path, join(dir, 'fw.bin'));
    expect(r.stderr).toContain('flash: rig three, 3 boards at once at 921600 baud');
    // Plain lines, one per change of stage, each naming its board.
    expect(r.stderr).toMatch(new RegExp(`^left ${boards[0]!.rfc2217Url} +booted 2026\\.10\\.01$`, 'm'));
    expect(r.stderr).toMatch(/^gone rfc2217:\/\/127\.0\.0\.1:\d+ +failed: cannot reach rfc2217:\/\/127\.0\.0\.1:\d+: connection refused/m);
    const table = r.stdout.split('\n');
    expect(table[0]).toMatch(/^board +port +chip +MAC +written +skipped +seconds +line_ratio +verified +booted$/);
    expect(table[1]).toMatch(new RegExp(`^left +${boards[0]!.rfc2217Url} +ESP32-S3 +24:0A:C4:10:00:01 +\\d+ +\\d+ +\\d+\\.\\d +[\\d.-]+ +yes +2026\\.10\\.01$`));
    expect(table[2]).toMatch(/^gone +rfc2217:\/\/127\.0\.0\.1:\d+ +- +- +0 +0 +\d+\.\d +- +no +FAILED \(exit 5\)$/);
    expect(table[3]).toMatch(/^right +rfc2217:\S+ +ESP32-S3 +24:0A:C4:10:00:02 +\d+ +\d+ +\d+\.\d +[\d.-]+ +yes +2026\.10\.01$/);
    expect(r.stdout).toMatch(/^gone: cannot reach rfc2217:\/\/127\.0\.0\.1:\d+: connection refused/m);
    expect(r.stdout).toContain('flashed 2 of 3 boards; failed: gone\n');
    expect(r.status).toBe(11);
  });

  it('a board whose chip is not the rig\'s fails alone; the other, already holding the image, is skipped whole', { timeout: 180_000 }, async () => {
    const path = rigFile('mixed', [
      { id: 'left', port: boards[0]!.rfc2217Url, chip: 'esp32c3' },
      { id: 'right', port: boards[1]!.rfc2217Url },
    ]);
    const r = await fleet('flash', '--rig', path, join(dir, 'fw.bin'));
    expect(r.stdout).toContain(`left: the board on ${boards[0]!.rfc2217Url} is an ESP32-S3, not an ESP32-C3`);
    expect(r.stdout).toMatch(/^left .* no +FAILED \(exit 7\)$/m);
    expect(r.stdout).toMatch(/^right +\S+ +ESP32-S3 +\S+ +0 +\d+ +\d+\.\d +- +yes +2026\.10\.01$/m);
    // Skipped whole: said as such, never as a board "writing" (a full bar on a terminal).
    expect(r.stderr).toMatch(new RegExp(`^right ${boards[1]!.rfc2217Url} +unchanged, skipped$`, 'm'));
    expect(r.stderr).not.toMatch(/^right .* writing$/m);
    expect(r.stdout).toContain('flashed 1 of 2 boards; failed: left\n');
    expect(r.status).toBe(11);
  });

  it('fleet flash on one board says what it skipped: the whole image, or all but the blocks written', { timeout: 120_000 }, async () => {
    const same = await fleet('flash', '--port', boards[1]!.rfc2217Url, join(dir, 'fw.bin'));
    const bytes = readFileSync(join(dir, 'fw.bin')).length;
    expect(same.stderr).toContain(`flash: unchanged: fw.bin at 0x10000 (${bytes} bytes) matches the flash, skipped\n`);
    // No progress bar for an image nothing was written of: a line that says it was skipped.
    expect(same.stderr).toContain('flash: 1/1 fw.bin already on the board, skipped\n');
    expect(same.stderr).not.toMatch(/\[#+\] +100% 1\/1 fw\.bin/);
    expect(same.stdout).toBe('booted 2026.10.01\n');
    expect(describeWritten('fw.bin', { address: 0x10000, bytes: 200_000, skippedBytes: 134_464, regions: [[0x20000, 0x10000]] })).toBe(
      'fw.bin at 0x10000: wrote 65536 bytes (0x20000+65536), skipped 134464 unchanged',
    );
  });

  it('fleet bench --flash flashes the rig the same way first; a board that cannot be flashed ends the bench before any scenario', { timeout: 180_000 }, async () => {
    const path = rigFile('bench-two', [
      { id: 'left', port: boards[0]!.rfc2217Url },
      { id: 'gone', port: `rfc2217://127.0.0.1:${closedPort}` },
    ]);
    const r = await fleet('bench', path, '--flash', join(dir, 'fw.bin'), '--scenario', 'ota-revoked-version', '--report', join(dir, 'report'));
    expect(r.stderr).toContain('bench: flashing 2 boards at once with 2026.10.01\n');
    expect(r.stderr).toMatch(/^left +rfc2217:\S+ +ESP32-S3 +24:0A:C4:10:00:01 +\d+ +\d+ +\d+\.\d +[\d.-]+ +yes +-$/m);
    expect(r.stderr).toMatch(/^gone +rfc2217:\S+ +- +- +0 +0 +\d+\.\d +- +no +FAILED \(exit 5\)$/m);
    expect(r.stderr).toContain('bench: gone could not be flashed; no scenario ran\n');
    expect(r.stdout).toBe('');
    expect(r.status).toBe(1);
  });

  it('refuses a rig without ports, an unknown board, --board without --rig, --port with --rig', async () => {
    expect(await fleet('flash', '--rig', twoBoard, join(dir, 'fw.bin'))).toMatchObject({
      status: 4,
      stderr: 'fleet: rig two-board has no board with a port to flash (virtual boards have none: start them with fleet virtual and name their rfc2217:// URLs in a rig of kind rfc2217 boards)\n',
    });
    const path = rigFile('one', [{ id: 'left', port: boards[0]!.rfc2217Url }]);
    expect(await fleet('flash', '--rig', path, '--board', 'nope', join(dir, 'fw.bin'))).toMatchObject({ status: 4, stderr: 'fleet: no board nope on rig one (its boards: left)\n' });
    expect(await fleet('flash', '--board', 'left', join(dir, 'fw.bin'))).toMatchObject({ status: 2, stderr: 'fleet: --board names boards of a rig: give --rig too\n' });
    expect(await fleet('flash', '--rig', path, '--port', boards[0]!.rfc2217Url, join(dir, 'fw.bin'))).toMatchObject({ status: 2, stderr: 'fleet: --port and --rig: give one (the rig file names the ports)\n' });
  });
});
