// Re-flashing writes only what differs: the flasher stub is asked for the MD5 of each 64 KB block of
// the image (SPI_FLASH_MD5) and blocks the chip already holds are skipped; the whole image is then
// verified. A block whose flash differs by one byte is written; --force writes everything. Through
// the virtual board's RFC 2217 port, as `fleet flash` does it (flashBoard).
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { firmwareImage } from '../../firmware/sdk-host/firmware-image.ts';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import { flashBoard, type FlashOutcome } from '../../harness/flash/flash-board.ts';
import { planFlash } from '../../harness/flash/inputs.ts';
import { COMPARE_BLOCK_BYTES } from '../../harness/flash/write-changed.ts';
import { loadRig } from '../../harness/rig.ts';
import { createTransport } from '../../harness/transport/open.ts';
import { VirtualBoard } from '../../harness/virtual-board.ts';

const rig = loadRig(fileURLToPath(new URL('../../harness/rigs/two-board.json', import.meta.url)));
const table = productPartitions();
const APP = 0x10000;
const dir = mkdtempSync(join(tmpdir(), 'flash-unchanged-'));
const board = new VirtualBoard(structuredClone(rig.boards[1]!), { air: new VirtualAir(), workDir: dir });
const imagePath = join(dir, 'fw.bin');
let imageBytes: number;

beforeAll(async () => {
  await board.start();
  const image = await firmwareImage('2026.07.01', { variant: board.engine.variant });
  imageBytes = image.length;
  const fd = openSync(imagePath, 'w');
  writeSync(fd, image);
  closeSync(fd);
}, 60_000);
afterAll(async () => {
  await board.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function flash(force = false): Promise<FlashOutcome> {
  const transport = await createTransport(board.rfc2217Url);
  try {
    return await flashBoard({ transport, plan: planFlash([imagePath], table), productTable: table, baudRate: 921_600, chip: 'auto', resetMethod: 'classic', force, bootTimeoutMs: 30_000 });
  } finally {
    await transport.disconnect();
  }
}

function flashByte(offset: number): number {
  const fd = openSync(board.flashImagePath, 'r+');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, offset);
    return b[0]!;
  } finally {
    closeSync(fd);
  }
}

function setFlashByte(offset: number, value: number): void {
  const fd = openSync(board.flashImagePath, 'r+');
  try {
    writeSync(fd, Buffer.of(value), 0, 1, offset);
  } finally {
    closeSync(fd);
  }
}

describe('flashing only what changed', () => {
  it('skips an image the chip already holds, and writes the one block whose flash differs by a byte', { timeout: 180_000 }, async () => {
    const first = await flash();
    expect(first.booted?.version).toBe('2026.07.01');
    expect(first.written[0]!.regions.length).toBeGreaterThan(0);

    const again = await flash();
    expect(again.written).toEqual([{ address: APP, bytes: imageBytes, skippedBytes: Math.ceil(imageBytes / 4) * 4, regions: [] }]);
    expect(again.booted?.version).toBe('2026.07.01');

    // One byte of the flash changed under the third block of the image: that block alone is written.
    const at = APP + 2 * COMPARE_BLOCK_BYTES + 123;
    const old = flashByte(at);
    setFlashByte(at, old ^ 0x01);
    const repaired = await flash();
    expect(repaired.written[0]!.regions).toEqual([[APP + 2 * COMPARE_BLOCK_BYTES, COMPARE_BLOCK_BYTES]]);
    expect(flashByte(at)).toBe(old);
    expect(repaired.booted?.version).toBe('2026.07.01');
  });

  it('writes the whole image with force', { timeout: 120_000 }, async () => {
    const forced = await flash(true);
    expect(forced.written[0]!.regions).toEqual([[APP, Math.ceil(imageBytes / 4) * 4]]);
    expect(forced.written[0]!.skippedBytes).toBe(0);
    expect(forced.booted?.version).toBe('2026.07.01');
  });
});
