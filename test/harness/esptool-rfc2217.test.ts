// Unmodified esptool-js flashes a virtual board through the board's RFC 2217 port (a real TCP
// socket, telnet COM-PORT-OPTION): its classic DTR/RTS reset reaches EN and IO0 through the
// emulated auto-reset circuit, so the board enters download mode by itself; after writing, a hard
// reset sequence over RTS starts the firmware. A corrupt image is written and verified byte for
// byte, and then the bootloader refuses it; an erased flash does not boot at all. Junk on the line
// gets error statuses and leaves the loader working.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { firmwareImage } from '../../firmware/sdk-host/firmware-image.ts';
import type { HostVariant } from '../../firmware/sdk-host/build.ts';
import { SlipDecoder, slipEncode } from '../../firmware/virtual-esp32/rom/slip.ts';
import { withEsptool, writeImages } from '../../harness/flash/esptool.ts';
import { Rfc2217Port } from '../../harness/flash/rfc2217-port.ts';
import { loadRig } from '../../harness/rig.ts';
import { VirtualBoard } from '../../harness/virtual-board.ts';

const rig = loadRig(fileURLToPath(new URL('../../harness/rigs/two-board.json', import.meta.url)));
let dir: string;
let board: VirtualBoard;
/** The board's own build (its rig entry's): the images flashed below are of it, at other versions. */
let variant: HostVariant;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'esptool-rfc2217-'));
  board = new VirtualBoard(structuredClone(rig.boards[1]!), { air: new VirtualAir(), workDir: dir });
  await board.start();
  variant = board.engine.variant;
}, 60_000);
afterAll(async () => {
  await board?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the RFC 2217 port', () => {
  it('takes the classic reset into download mode, and answers junk and a bad checksum with error statuses', { timeout: 60_000 }, async () => {
    expect(board.rfc2217Url).toMatch(/^rfc2217:\/\/127\.0\.0\.1:\d+$/);
    const port = new Rfc2217Port(board.rfc2217Url);
    await port.open({ baudRate: 115200 });
    const packets: Uint8Array[] = [];
    const decoder = new SlipDecoder((p) => packets.push(p));
    const reader = port.readable!.getReader();
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        decoder.push(value);
      }
    })();
    try {
      // esptool's ClassicReset: EN low (RTS), then IO0 low (DTR) while EN rises, then release.
      await port.setSignals({ dataTerminalReady: false, requestToSend: true });
      await new Promise((r) => setTimeout(r, 100));
      await port.setSignals({ dataTerminalReady: true, requestToSend: false });
      await new Promise((r) => setTimeout(r, 50));
      await port.setSignals({ dataTerminalReady: false, requestToSend: false });
      await board.settled();
      expect(board.mode).toBe('download');
      const writer = port.writable!.getWriter();
      // Noise, a packet with a bad SLIP escape, FLASH_BEGIN (4 KB at 0x700000), then FLASH_DATA whose checksum is wrong.
      await writer.write(Uint8Array.of(0x00, 0x55, 0xff, 0x13, 0xc0, 0x00, 0x0a, 0xdb, 0x01, 0xc0));
      const begin = Uint8Array.of(0x00, 0x02, 20, 0, 0, 0, 0, 0, ...u32(0x1000), ...u32(1), ...u32(0x1000), ...u32(0x700000), ...u32(0));
      const payload = [...u32(4), ...u32(0), ...u32(0), ...u32(0), 1, 2, 3, 4];
      const badChecksum = Uint8Array.of(0x00, 0x03, payload.length, 0, 0x00, 0, 0, 0, ...payload); // 0xEF^1^2^3^4 = 0xEB, not 0
      await writer.write(slipEncode(begin));
      await writer.write(slipEncode(badChecksum));
      writer.releaseLock();
      for (let i = 0; i < 100 && packets.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
      // Only the well-framed packets are answered, with the ROM's 4 status bytes: FLASH_BEGIN succeeds,
      // FLASH_DATA fails with 0x07, "Invalid CRC in message".
      expect(packets.map((p) => [...p])).toEqual([
        [0x01, 0x02, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        [0x01, 0x03, 4, 0, 0, 0, 0, 0, 1, 0x07, 0, 0],
      ]);
    } finally {
      await reader.cancel();
      await port.close();
    }
  });

  it('lets esptool-js write a corrupt image (verified as sent), and the bootloader then refuses it', { timeout: 120_000 }, async () => {
    const corrupt = (await firmwareImage('2026.10.01', { variant })).slice();
    corrupt[0x3000] = corrupt[0x3000]! ^ 0x40;
    const run = await withEsptool({ port: new Rfc2217Port(board.rfc2217Url), before: 'default_reset', after: 'hard_reset' }, (loader) => writeImages(loader, [{ address: 0x10000, data: corrupt }], false));
    expect(run.chip).toMatch(/^ESP32-S3/);
    expect(run.mac.toUpperCase()).toBe(board.spec.wifiMac);
    expect(run.transcript).toContain('Hash of data verified.');
    expect(run.transcript.at(-1)).toBe('Custom resetting using sequence D0|R1|W100|R0');
    await board.settled();
    expect(board.mode).toBe('halted');
    await board.waitForLine(/^E \(\d+\) boot: No bootable app partitions in the partition table$/, 10_000);
    const text = board.consoleLines().join('\n');
    expect(text).toMatch(/^E \(\d+\) esp_image: Checksum failed\. Calculated 0x[0-9a-f]+ read 0x[0-9a-f]+$/m);
    expect(text).toMatch(/^E \(\d+\) esp_image: Image hash failed - image is corrupt$/m);
    expect(text).toMatch(/^E \(\d+\) boot: OTA app partition slot 0 is not bootable$/m);
    expect(text).toMatch(/^E \(\d+\) esp_image: image at 0x310000 has invalid magic byte \(nothing flashed here\?\)$/m);
  });

  it('lets esptool-js write the good image compressed after that; the board boots it', { timeout: 120_000 }, async () => {
    const from = board.consoleLines().length;
    const good = await firmwareImage('2026.10.01', { variant });
    await withEsptool({ port: new Rfc2217Port(board.rfc2217Url), before: 'default_reset', after: 'hard_reset' }, (loader) => writeImages(loader, [{ address: 0x10000, data: good }], true));
    await board.settled();
    expect(board.mode).toBe('app');
    await board.waitForLine(/^LOG INFO boot: .*firmware 2026\.10\.01/, 30_000, from);
  });

  it('erases the whole flash with the stub: the ROM then finds no bootloader', { timeout: 120_000 }, async () => {
    const from = board.consoleLines().length;
    await withEsptool({ port: new Rfc2217Port(board.rfc2217Url), before: 'default_reset', after: 'hard_reset' }, (loader) => loader.eraseFlash());
    await board.settled();
    expect(board.mode).toBe('halted');
    await board.waitForLine(/^invalid header: 0xffffffff$/, 10_000, from);
  });
});

function u32(v: number): number[] {
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
}
