// npm run bench:flash: how long unmodified esptool-js takes to write a 1.5 MB app image into a
// virtual ESP32-S3, whose UART is paced at the baud rate it pretends to run at (921,600 after
// esptool's CHANGE_BAUDRATE), over the board's pseudo-terminal and over its RFC 2217 port, with
// compression and without. One line per case:
//   flash <case> bytes=<image bytes> seconds=<write time> line_rate_ratio=<seconds / (bytes × 10 / baud)>
// The line-rate limit is what the image's bytes alone would take at that baud rate (8N1); a ratio
// under 1 means compression carried fewer bytes than the image has. Connecting, the stub upload
// (at the ROM's 115,200) and the baud change are not counted. Figures, not assertions.
// The ser2net cases go through Debian's ser2net in front of the board's pseudo-terminal (our RFC 2217
// client to a third-party server; no modem lines there, so the boot control enters download mode).
// After the cases, when both ran, how RFC 2217 compares with the pseudo-terminal (the same bytes):
//   flash rfc2217_to_pty ratio=<pty seconds / rfc2217 seconds>   (1: as fast; compressed cases if run, else raw)
// Then `fleet flash --rig`'s path (harness/flash/flash-rig.ts) on 1, 2 and 4 boards at once through
// their RFC 2217 ports, every block written (--force), port opened to verified, against one board:
//   flash rig boards=<n> seconds=<s> ratio_to_one=<s / seconds for one board>
// and a re-flash of the same image on one board, connect and stub included, nothing written:
//   flash unchanged bytes=<image bytes> seconds=<s>
// Options: --baud 921600 --bytes 1572864 --cases pty-raw,pty-deflate,rfc2217-raw,rfc2217-deflate,ser2net-raw,ser2net-deflate,rig,unchanged
//          --rig-boards 1,2,4
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { VirtualAir } from '../../harness/virtual-board.ts';
import { firmwareOf } from '../../firmware/sdk-host/firmware-image.ts';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import { PacedLine } from '../../firmware/chip/uart.ts';
import { CHIPS } from '../../firmware/image/chips.ts';
import { verifyAppImageBytes } from '../../firmware/image/app-image.ts';
import { buildVirtualAppImage } from '../../firmware/image/virtual-payload.ts';
import { withEsptool, writeImages } from '../../harness/flash/esptool.ts';
import { flashRig } from '../../harness/flash/flash-rig.ts';
import type { FlashPlan } from '../../harness/flash/inputs.ts';
import { Rfc2217Port } from '../../harness/flash/rfc2217-port.ts';
import { NodeSerialPort } from '../../harness/flash/serial-port.ts';
import { loadRig } from '../../harness/rig.ts';
import { startSer2net, type Ser2net } from '../../harness/transport/ser2net.ts';
import { VirtualBoard } from '../../harness/virtual-board.ts';

const CASES = ['pty-raw', 'pty-deflate', 'rfc2217-raw', 'rfc2217-deflate', 'ser2net-raw', 'ser2net-deflate', 'rig', 'unchanged'] as const;
type Case = (typeof CASES)[number];

const { values } = parseArgs({
  options: { baud: { type: 'string', default: '921600' }, bytes: { type: 'string', default: String(1.5 * 1024 * 1024) }, cases: { type: 'string', default: CASES.join(',') }, 'rig-boards': { type: 'string', default: '1,2,4' } },
});
const baud = Number(values.baud);
const target = Number(values.bytes);
const cases = values.cases!.split(',') as Case[];
for (const c of cases) if (!CASES.includes(c)) throw new Error(`unknown case ${c}: one of ${CASES.join(', ')}`);
if (!Number.isInteger(baud) || baud < 9600) throw new Error(`--baud must be a whole number of at least 9600: ${values.baud}`);
const rigSizes = values['rig-boards']!.split(',').map(Number);
if (rigSizes.some((n) => !Number.isInteger(n) || n < 1 || n > 5)) throw new Error(`--rig-boards must be counts from 1 to 5 (the five-board rig): ${values['rig-boards']}`);

/**
 * An app image of about `bytes` bytes whose payload is the virtual board's real firmware (the SDK's
 * host build), repeated to fill. The payload is deflated in the image (firmware/image/virtual-payload.ts),
 * so compression on the wire gains little here, unlike a real ESP32 app image (docs/flash-and-boot.md).
 */
async function imageOf(bytes: number): Promise<Uint8Array> {
  const so = await firmwareOf();
  const build = (n: number) => {
    const firmware = new Uint8Array(Math.max(0, n));
    for (let at = 0; at < firmware.length; at += so.length) firmware.set(so.subarray(0, Math.min(so.length, firmware.length - at)), at);
    return buildVirtualAppImage({ chip: CHIPS.esp32s3, version: '2026.12.01', firmware });
  };
  const overhead = build(0).length;
  const perByte = (build(so.length).length - overhead) / so.length;
  let n = Math.round((bytes - overhead) / perByte);
  n += Math.round((bytes - build(n).length) / perByte);
  const image = build(n);
  if (!verifyAppImageBytes(image).ok) throw new Error('the bench image does not verify');
  return image;
}

const rig = loadRig(fileURLToPath(new URL('../../harness/rigs/five-board.json', import.meta.url)));
const dir = mkdtempSync(join(tmpdir(), 'flash-bench-'));
const air = new VirtualAir();
const boards = rig.boards.slice(0, Math.max(1, ...(cases.includes('rig') ? rigSizes : [1]))).map((spec) => new VirtualBoard(structuredClone(spec), { air, workDir: dir }));
const board = boards[0]!;
const linkSeconds = new Map<Case, number>();
try {
  const image = await imageOf(target);
  process.stderr.write(`bench:flash: ${image.length} bytes at 0x10000, UART at ${baud} baud after the stub (115200 before)\n`);
  for (const b of boards) await b.start();
  for (const c of cases.filter((k) => k !== 'rig' && k !== 'unchanged')) {
    const overPty = !c.startsWith('rfc2217');
    let ser2net: Ser2net | undefined;
    if (overPty) {
      // No modem lines on a pseudo-terminal: the bench's boot control puts the board in download mode.
      board.holdBoot(true);
      await board.reset();
      await board.releaseConsole();
    }
    if (c.startsWith('ser2net')) ser2net = await startSer2net(dir, board.consolePath);
    const port = ser2net ? new Rfc2217Port(ser2net.url) : overPty ? new NodeSerialPort(board.consolePath) : new Rfc2217Port(board.rfc2217Url);
    let seconds = 0;
    await withEsptool({ port, before: overPty ? 'no_reset' : 'default_reset', after: overPty ? 'stay' : 'hard_reset', baudRate: baud }, async (loader) => {
      const t0 = performance.now();
      await writeImages(loader, [{ address: 0x10000, data: image }], c.endsWith('deflate'));
      seconds = (performance.now() - t0) / 1000;
    });
    await ser2net?.stop();
    if (overPty) {
      board.holdBoot(false);
      await board.attachConsole();
      await board.reset();
    }
    await board.settled();
    const ratio = seconds / PacedLine.seconds(image.length, baud);
    linkSeconds.set(c, seconds);
    process.stdout.write(`flash ${c} bytes=${image.length} seconds=${seconds.toFixed(2)} line_rate_ratio=${ratio.toFixed(3)}\n`);
  }
  const pair = (['deflate', 'raw'] as const).find((k) => linkSeconds.has(`pty-${k}`) && linkSeconds.has(`rfc2217-${k}`));
  if (pair) process.stdout.write(`flash rfc2217_to_pty ratio=${(linkSeconds.get(`pty-${pair}`)! / linkSeconds.get(`rfc2217-${pair}`)!).toFixed(3)}\n`);
  const plan: FlashPlan = { files: [{ address: 0x10000, path: 'bench.bin', data: image }], erase: [] };
  const flashAll = (n: number, force: boolean) =>
    flashRig(
      boards.slice(0, n).map((b) => ({ id: b.spec.id, port: b.rfc2217Url, chip: b.spec.chip, resetMethod: 'classic' as const })),
      { plan, productTable: productPartitions(), baudRate: baud, force, reset: false },
    );
  if (cases.includes('rig')) {
    // The boards stay in the stub between sizes: the next classic reset over RFC 2217 takes them into
    // download mode again. They are not reset into the image: it is a controller's, and a virtual
    // client board (the rig's third and later boards) booting it did not come up within 40 s.
    let one = 0;
    for (const n of rigSizes) {
      const results = await flashAll(n, true);
      for (const r of results) if (r.error) throw new Error(`bench:flash: ${r.target.id}: ${r.error}`);
      const seconds = Math.max(...results.map((r) => r.seconds));
      if (n === rigSizes[0]) one = seconds; // the first size is the reference (1 by default)
      process.stdout.write(`flash rig boards=${n} seconds=${seconds.toFixed(2)} ratio_to_one=${(seconds / one).toFixed(3)}\n`);
    }
  }
  if (cases.includes('unchanged')) {
    await flashAll(1, false);
    await resetToApp(board);
    const [again] = await flashAll(1, false);
    if (again!.error || again!.bytesWritten !== 0) throw new Error(`bench:flash: the re-flash wrote ${again!.bytesWritten} bytes: ${again!.error ?? ''}`);
    process.stdout.write(`flash unchanged bytes=${image.length} seconds=${again!.seconds.toFixed(2)}\n`);
  }
} finally {
  for (const b of boards) await b.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** A board left in the stub by a flash without reset: reset it into the image just written (a controller's) and let it settle. */
async function resetToApp(b: VirtualBoard): Promise<void> {
  await b.reset();
  await b.settled();
}
