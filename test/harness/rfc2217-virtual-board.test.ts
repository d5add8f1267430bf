// Our RFC 2217 client and the reset sequences (as data) against a virtual board's RFC 2217 port,
// whose DTR and RTS reach EN and IO0 through the DevKitC's auto-reset circuit: holding EN low stops
// the chip (the bench's "power off"), releasing it boots the firmware, the classic sequence enters
// the ROM's download mode, the hard reset leaves it, and a client that goes away drops both lines.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { loadRig } from '../../harness/rig.ts';
import { runResetSequence, SEQUENCES } from '../../harness/transport/reset-sequence.ts';
import { Rfc2217Transport } from '../../harness/transport/rfc2217.ts';
import { VirtualBoard } from '../../harness/virtual-board.ts';

const rig = loadRig(fileURLToPath(new URL('../../harness/rigs/two-board.json', import.meta.url)));
let dir: string;
let board: VirtualBoard;
let t: Rfc2217Transport;
const received: number[] = [];
const text = () => Buffer.from(received).toString('latin1');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rfc2217-virtual-'));
  board = new VirtualBoard(structuredClone(rig.boards[0]!), { air: new VirtualAir(), workDir: dir });
  await board.start();
  t = new Rfc2217Transport(board.rfc2217Url);
  await t.connect(115200);
  t.read((b) => received.push(...b));
}, 60_000);
afterAll(async () => {
  await t?.disconnect();
  await board?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('reset sequences over RFC 2217 on a virtual board', () => {
  it('holds the chip in reset with EN low, and boots the firmware when EN is released', { timeout: 60_000 }, async () => {
    expect(board.mode).toBe('app');
    await runResetSequence(t, SEQUENCES.classic.hold);
    await board.settled();
    expect(board.mode).toBe('off');
    expect(t.modemLines).toEqual({ dtr: false, rts: true });
    received.length = 0;
    const from = board.consoleLines().length;
    await runResetSequence(t, SEQUENCES.classic.release);
    await board.settled();
    expect(board.mode).toBe('app');
    await board.waitForLine(/^LOG INFO boot: controller /, 30_000, from);
    // The same console lines reached the RFC 2217 client.
    expect(text()).toMatch(/^ESP-ROM:esp32s3-20210327\r?\n/);
    expect(text()).toMatch(/\nLOG INFO boot: controller 5c0e1a00-0000-4000-8000-000000000001 firmware 2026\.01\.01 \(debug\)\n/);
  });

  it('enters the ROM download mode with the classic sequence, and leaves it with the hard reset', { timeout: 60_000 }, async () => {
    received.length = 0;
    await runResetSequence(t, SEQUENCES.classic.download);
    await board.settled();
    expect(board.mode).toBe('download');
    expect(text()).toMatch(/rst:0x1 \(POWERON\),boot:0x0 \(DOWNLOAD\(USB\/UART0\)\)\r\nwaiting for download\r\n/);
    const from = board.consoleLines().length;
    await runResetSequence(t, SEQUENCES.classic.hard);
    await board.settled();
    expect(board.mode).toBe('app');
    await board.waitForLine(/^LOG INFO boot: /, 30_000, from);
  });

  it('drops DTR and RTS when the client goes away: a chip held in reset boots', { timeout: 60_000 }, async () => {
    const other = new Rfc2217Transport(board.rfc2217Url);
    await t.disconnect();
    await other.connect(115200);
    await runResetSequence(other, SEQUENCES.classic.hold);
    await board.settled();
    expect(board.mode).toBe('off');
    const from = board.consoleLines().length;
    await other.disconnect();
    await board.waitForLine(/^LOG INFO boot: /, 30_000, from);
    await board.settled();
    expect(board.mode).toBe('app');
    await t.connect(115200);
  });
});
