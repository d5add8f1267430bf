// Unmodified esptool-js flashes a virtual board over its real pseudo-terminal (socat), as over a USB
// adapter without modem lines: the bench's boot control holds BOOT and resets the board into the
// ROM's download mode, esptool-js syncs, detects the ESP32-S3 and its eFuse MAC, uploads and starts
// its stub, raises the baud rate, writes and verifies, reads flash back and erases; BOOT is released,
// the board is reset, and the new firmware boots.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { firmwareImage } from '../../firmware/sdk-host/firmware-image.ts';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import type { HostVariant } from '../../firmware/sdk-host/build.ts';
import { compilePartitionTable } from '../../firmware/image/partition-table.ts';
import { withEsptool, writeImages } from '../../harness/flash/esptool.ts';
import { NodeSerialPort } from '../../harness/flash/serial-port.ts';
import { NoModemLinesError } from '../../harness/flash/web-serial.ts';
import { loadRig } from '../../harness/rig.ts';
import { VirtualBoard } from '../../harness/virtual-board.ts';

const rig = loadRig(fileURLToPath(new URL('../../harness/rigs/two-board.json', import.meta.url)));
let dir: string;
let board: VirtualBoard;
/** The board's own build (its rig entry's): the images flashed below are of it, at other versions. */
let variant: HostVariant;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'esptool-pty-'));
  board = new VirtualBoard(structuredClone(rig.boards[0]!), { air: new VirtualAir(), workDir: dir });
  await board.start();
  variant = board.engine.variant;
}, 60_000);
afterAll(async () => {
  await board?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function reportedVersion(): Promise<string> {
  const answer = await board.command('status');
  expect(answer).toMatch(/^OK /);
  return JSON.parse(answer.slice(3)).firmware_version;
}

describe('esptool-js on the pseudo-terminal', () => {
  it('flashes a new image into a board held in download mode by its boot control; the new version boots', { timeout: 120_000 }, async () => {
    expect(await reportedVersion()).toBe('2026.01.01');
    board.holdBoot(true);
    await board.reset();
    expect(board.mode).toBe('download');
    await board.waitForLine(/^waiting for download/, 10_000);
    expect(board.consoleLines().join('\n')).toMatch(/rst:0x1 \(POWERON\),boot:0x0 \(DOWNLOAD\(USB\/UART0\)\)/);
    await board.releaseConsole();
    const image = await firmwareImage('2026.09.01', { variant });
    const run = await withEsptool({ port: new NodeSerialPort(board.consolePath), before: 'no_reset', after: 'stay' }, async (loader) => {
      await writeImages(loader, [{ address: 0x10000, data: image }], true);
      // Read back the partition table and the start of the image through the stub's READ_FLASH.
      const table = await loader.readFlash(0x8000, 0xc00);
      const head = await loader.readFlash(0x10000, 4096);
      // Erase otadata (stub ERASE_REGION), as `idf.py flash` resets it to boot ota_0.
      await loader.checkCommand('erase otadata', loader.ESP_ERASE_REGION, new Uint8Array([...le(0xd000), ...le(0x2000)]));
      const otadata = await loader.readFlash(0xd000, 64);
      return { table, head, otadata };
    });
    expect(run.chip).toMatch(/^ESP32-S3 \(QFN56\) \(revision v0\.2\)$/);
    expect(run.mac.toUpperCase()).toBe(board.spec.wifiMac);
    expect(run.flashId).toBe(0x1740c8); // GigaDevice, 8 MB
    expect(run.transcript).toContain('Stub running...');
    expect(run.transcript).toContain('Changing baudrate to 921600');
    expect(run.transcript).toContain('Hash of data verified.');
    expect(Buffer.from(run.value.table).equals(Buffer.from(compilePartitionTable(productPartitions(), 8 * 1024 * 1024)))).toBe(true);
    expect(Buffer.from(run.value.head).equals(Buffer.from(image.subarray(0, 4096)))).toBe(true);
    expect(run.value.otadata.every((b) => b === 0xff)).toBe(true);

    board.holdBoot(false);
    await board.attachConsole();
    await board.reset();
    expect(board.mode).toBe('app');
    expect(await reportedVersion()).toBe('2026.09.01');
    expect(board.consoleLines().join('\n')).toMatch(/boot: No factory image, trying OTA 0/);
  });

  it('cannot reset through the pseudo-terminal: it has no modem lines, and says so', { timeout: 30_000 }, async () => {
    await board.releaseConsole();
    const port = new NodeSerialPort(board.consolePath);
    await port.open({ baudRate: 115200 });
    try {
      await expect(port.setSignals({ dataTerminalReady: false, requestToSend: true })).rejects.toBeInstanceOf(NoModemLinesError);
    } finally {
      await port.close();
      await board.attachConsole();
    }
    expect(board.mode).toBe('app');
  });
});

function le(value: number): number[] {
  return [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff];
}
