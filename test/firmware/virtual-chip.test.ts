// The virtual chip's parts beneath the SDK's host build of the firmware, each on its own: the call
// list and the C header the natives compile against, the channel's framing over a real socket, the
// NVS partition, the SSD1306 controller as the SDK's driver drives it, and the board's network
// (routes, the listener port kept across restarts, the 503 stand-in, the NTP server). The whole
// chip under a running firmware: sdk-board*.test.ts.
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { C_HEADER_PATH, CHIP_CALLS, CHIP_EVENTS, cHeader, type ChipCallHandlers } from '../../firmware/virtual-esp32/chip-calls.ts';
import { ChipChannel, decodeFields, encodeFields } from '../../firmware/virtual-esp32/chip-channel.ts';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import { FlashImage } from '../../firmware/virtual-esp32/flash-image.ts';
import { BoardNetwork } from '../../firmware/virtual-esp32/network.ts';
import { Nvs } from '../../firmware/virtual-esp32/nvs.ts';
import { Ssd1306 } from '../../firmware/virtual-esp32/oled-controller.ts';
import { framebufferText } from '../../firmware/virtual-esp32/oled-text.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'virtual-chip-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the call list', () => {
  it('fw_host_calls.h is what chip-calls.ts writes (npx tsx firmware/virtual-esp32/chip-calls.ts --write)', () => {
    expect(readFileSync(C_HEADER_PATH, 'utf8')).toBe(cHeader());
  });

  it('numbers are unique among the calls and among the events', () => {
    const calls = Object.values(CHIP_CALLS).map((c) => c.id);
    const events = Object.values(CHIP_EVENTS).map((e) => e.id);
    expect(new Set(calls).size).toBe(calls.length);
    expect(new Set(events).size).toBe(events.length);
  });

  it('fields encode as fw_host.h says: i32 LE, a byte, u32 length + bytes, and a NUL after a string', () => {
    const bytes = encodeFields(['int', 'bool', 'bytes', 'string'], [-2, true, new Uint8Array([7, 8]), 'hé']);
    expect([...bytes]).toEqual([0xfe, 0xff, 0xff, 0xff, 1, 2, 0, 0, 0, 7, 8, 3, 0, 0, 0, 0x68, 0xc3, 0xa9, 0]);
    expect(decodeFields(['int', 'bool', 'bytes', 'string'], bytes)).toEqual([-2, true, new Uint8Array([7, 8]), 'hé']);
    expect(() => decodeFields(['string'], Buffer.from([9, 0, 0, 0, 1]))).toThrow(/past the end/);
    expect(() => encodeFields(['int'], [])).toThrow(/expected 1 fields/);
  });
});

/** The firmware's end of a channel: frames written to a real socket, answers read back. */
class FirmwareEnd {
  private buffer = Buffer.alloc(0);
  private readonly waiting: ((frame: { status: number; payload: Buffer }) => void)[] = [];

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      while (this.buffer.length >= 8 && this.buffer.length >= 4 + this.buffer.readUInt32LE(0)) {
        const length = this.buffer.readUInt32LE(0);
        const frame = { status: this.buffer.readUInt16LE(4), payload: this.buffer.subarray(8, 4 + length) };
        this.buffer = this.buffer.subarray(4 + length);
        this.waiting.shift()?.(frame);
      }
    });
  }

  static frame(id: number, payload: Buffer): Buffer {
    const header = Buffer.alloc(8);
    header.writeUInt32LE(payload.length + 4, 0);
    header.writeUInt16LE(id, 4);
    return Buffer.concat([header, payload]);
  }

  answer(): Promise<{ status: number; payload: Buffer }> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}

async function socketPair(): Promise<{ chip: Socket; firmware: Socket; server: Server }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const accepted = new Promise<Socket>((r) => server.once('connection', r));
  const firmware = connect((server.address() as { port: number }).port, '127.0.0.1');
  return { chip: await accepted, firmware, server };
}

describe('the channel', () => {
  const handlers = {
    fuseHmac: async (message: Uint8Array) => {
      await new Promise((r) => setTimeout(r, 20)); // slower than the call after it: answers stay in order
      return [new Uint8Array([...message].reverse())];
    },
    macAddress: (which: string) => {
      if (which !== 'base') throw new Error(`no MAC ${which}`);
      return [new Uint8Array([1, 2, 3, 4, 5, 6])];
    },
  } as unknown as ChipCallHandlers;

  it('answers calls in the order they came, split anyhow across reads; an error is status 1 with its message', async () => {
    const { chip, firmware, server } = await socketPair();
    const channel = new ChipChannel(chip, chip, handlers, (err) => {
      throw err;
    });
    const end = new FirmwareEnd(firmware);
    const bytes = Buffer.concat([
      FirmwareEnd.frame(CHIP_CALLS.fuseHmac.id, encodeFields(['bytes'], [new Uint8Array([1, 2, 3])])),
      FirmwareEnd.frame(CHIP_CALLS.macAddress.id, encodeFields(['string'], ['base'])),
      FirmwareEnd.frame(CHIP_CALLS.macAddress.id, encodeFields(['string'], ['bogus'])),
      FirmwareEnd.frame(999, Buffer.alloc(0)),
    ]);
    const answers = [end.answer(), end.answer(), end.answer(), end.answer()];
    for (const b of bytes) firmware.write(Buffer.from([b])); // one byte a write
    const [a, b, c, d] = await Promise.all(answers);
    expect(a!.status).toBe(0);
    expect(decodeFields(['bytes'], a!.payload)).toEqual([new Uint8Array([3, 2, 1])]);
    expect(decodeFields(['bytes'], b!.payload)).toEqual([new Uint8Array([1, 2, 3, 4, 5, 6])]);
    expect(c!.status).toBe(1);
    expect(decodeFields(['string'], c!.payload)).toEqual(['no MAC bogus']);
    expect(d!.status).toBe(1);
    expect(decodeFields(['string'], d!.payload)).toEqual(['unknown chip call 999']);
    expect(channel.trace).toEqual(['fuseHmac', 'macAddress', 'macAddress']);
    firmware.destroy();
    server.close();
  });

  it('a frame longer than any call is a broken channel: reported, nothing answered', async () => {
    const { chip, firmware, server } = await socketPair();
    const broken = new Promise<Error>((resolve) => new ChipChannel(chip, chip, handlers, resolve));
    const header = Buffer.alloc(8);
    header.writeUInt32LE(64 * 1024 * 1024, 0);
    firmware.write(header);
    expect((await broken).message).toMatch(/a call frame of 67108864 bytes/);
    firmware.destroy();
    server.close();
  });

  it('events go out as frames of their number and fields', async () => {
    const { chip, firmware, server } = await socketPair();
    const channel = new ChipChannel(chip, chip, handlers, () => undefined);
    const end = new FirmwareEnd(firmware);
    const got = end.answer();
    channel.emit('wifiNotify', 'gotIP', 0);
    const frame = await got;
    expect(frame.status).toBe(CHIP_EVENTS.wifiNotify.id);
    expect(decodeFields(CHIP_EVENTS.wifiNotify.fields, frame.payload)).toEqual(['gotIP', 0]);
    channel.close();
    channel.emit('wifiScanDone'); // closed: nothing more goes out
    firmware.destroy();
    server.close();
  });
});

describe('NVS in the flash image', () => {
  it('keeps booleans, 32-bit integers, strings and blobs per namespace across an open of the same flash; refuses what the chip refuses', () => {
    const path = join(dir, 'nvs.bin');
    const table = productPartitions();
    let flash = FlashImage.open(path, 8 * 1024 * 1024);
    const nvs = new Nvs(flash, table);
    expect(nvs.get('fleet', 'uuid')).toBeUndefined();
    nvs.set('fleet', 'uuid', 'ctl-0001');
    nvs.set('fleet', 'boots', 3);
    nvs.set('fleet', 'set', true);
    nvs.set('keys', 'blob', new Uint8Array([0, 255, 7]));
    expect(() => nvs.set('fleet', 'k'.repeat(16), 1)).toThrow(/nvs set fail/);
    expect(() => nvs.set('n'.repeat(16), 'k', 1)).toThrow(/nvs_open fail/);
    expect(() => nvs.set('fleet', 'f', 1.5)).toThrow(/float unsupported/);
    expect(() => nvs.set('fleet', 'big', 2 ** 31)).toThrow(/float unsupported/);
    flash.close();

    flash = FlashImage.open(path, 8 * 1024 * 1024);
    const again = new Nvs(flash, table);
    expect(again.get('fleet', 'uuid')).toBe('ctl-0001');
    expect(again.get('fleet', 'boots')).toBe(3);
    expect(again.get('fleet', 'set')).toBe(true);
    expect(again.get('keys', 'blob')).toEqual(new Uint8Array([0, 255, 7]));
    expect(again.keys('fleet').sort()).toEqual(['boots', 'set', 'uuid']);
    again.delete('fleet', 'boots');
    again.delete('fleet', 'never');
    expect(again.keys('fleet').sort()).toEqual(['set', 'uuid']);
    // Erased flash (esptool erase_flash) is an empty store.
    const nvsPartition = table.find((p) => p.name === 'nvs')!;
    flash.erase(nvsPartition.offset, nvsPartition.size);
    expect(again.keys('fleet')).toEqual([]);
    flash.close();
  });
});

describe('the SSD1306 on I2C', () => {
  /** What the SDK's driver does for a frame: the window commands, one a write, then GDDRAM data. */
  function drawFrame(panel: Ssd1306, frame: Uint8Array, chunk = 16): void {
    for (const b of [0x20, 0x00, 0x21, 0, 127, 0x22, 0, 7]) panel.write(new Uint8Array([0x00, b]));
    for (let at = 0; at < frame.length; at += chunk) panel.write(new Uint8Array([0x40, ...frame.subarray(at, at + chunk)]));
  }

  it('takes commands with their arguments and completes a frame when the window wraps', () => {
    const frames: Uint8Array[] = [];
    const panel = new Ssd1306((f) => frames.push(f));
    panel.write(new Uint8Array([0x00, 0xaf]));
    panel.write(new Uint8Array([0x00, 0x81])); // contrast: its argument comes in the next write
    panel.write(new Uint8Array([0x00, 0xaf])); // the argument, not "display on" again
    expect(panel.displayOn).toBe(true);
    const frame = new Uint8Array(1024);
    for (let i = 0; i < frame.length; i++) frame[i] = i & 0xff;
    drawFrame(panel, frame.subarray(0, 1000));
    expect(frames).toHaveLength(0);
    panel.write(new Uint8Array([0x40, ...frame.subarray(1000)]));
    expect(frames).toHaveLength(1);
    expect(frames[0]).toEqual(frame);
  });

  it('a blank frame reads as blank lines; page addressing writes one page without completing a frame', () => {
    const frames: Uint8Array[] = [];
    const panel = new Ssd1306((f) => frames.push(f));
    drawFrame(panel, new Uint8Array(1024));
    expect(framebufferText(frames[0]!).every((l) => l.trim() === '')).toBe(true);
    panel.write(new Uint8Array([0x00, 0x20]));
    panel.write(new Uint8Array([0x00, 0x02])); // page addressing
    panel.write(new Uint8Array([0x00, 0xb3]));
    panel.write(new Uint8Array([0x40, ...new Uint8Array(200).fill(0xff)]));
    expect(frames).toHaveLength(1);
    expect(panel.gddram[3 * 128]).toBe(0xff);
    expect(panel.gddram[4 * 128]).toBe(0);
  });
});

describe("the board's network", () => {
  const addresses = { ethernet: '127.0.0.2', ap: '127.0.0.3', station: '127.0.0.4' };

  it('routes: own addresses always; another SoftAP only when associated with it; elsewhere over Ethernet or the site Wi-Fi; NTP to its own server', async () => {
    let link: ReturnType<ConstructorParameters<typeof BoardNetwork>[0]['link']> = { ethernet: false, ap: false, station: null };
    const net = new BoardNetwork({ addresses, link: () => link, isSoftApAddress: (a) => a === '127.0.0.9', ntpTime: () => Date.UTC(2026, 10, 25), onListening: () => undefined });
    await net.start();
    expect(net.route(0, '127.0.0.2', 80)).toEqual(['127.0.0.2', '127.0.0.2', 80]);
    expect(() => net.route(0, '127.0.0.1', 8080)).toThrow(/no interface of this board reaches 127.0.0.1/);
    expect(() => net.route(0, '127.0.0.9', 80)).toThrow(/SoftAP this board is not associated with/);
    link = { ethernet: false, ap: false, station: { apAddress: '127.0.0.9', infrastructure: false } };
    expect(net.route(0, '127.0.0.9', 80)).toEqual(['127.0.0.4', '127.0.0.9', 80]);
    expect(() => net.route(0, '127.0.0.1', 8080)).toThrow(/no interface/); // a SoftAP routes nowhere else
    link = { ethernet: false, ap: false, station: { apAddress: '127.0.0.8', infrastructure: true } };
    expect(net.route(0, '127.0.0.1', 8080)).toEqual(['127.0.0.4', '127.0.0.1', 8080]);
    link = { ethernet: true, ap: false, station: null };
    expect(net.route(0, '127.0.0.1', 8080)).toEqual(['127.0.0.2', '127.0.0.1', 8080]);
    const [, ntpHost, ntpPort] = net.route(1, '203.0.113.5', 123);
    expect(ntpHost).toBe('127.0.0.1');

    // The NTP server answers a client request (mode 3) with the bench's time.
    const udp = createSocket('udp4');
    const request = Buffer.alloc(48);
    request[0] = (4 << 3) | 3;
    const reply = new Promise<Buffer>((r) => udp.once('message', r));
    udp.send(request, ntpPort, ntpHost);
    const answer = await reply;
    udp.close();
    expect(answer[0]! & 7).toBe(4);
    expect(answer.readUInt32BE(40) - 2_208_988_800).toBe(Date.UTC(2026, 10, 25) / 1000);
    await net.close();
  });

  it('a listener keeps its port across a restart, and meanwhile a stand-in answers 503 board_restarting with Retry-After', async () => {
    const seen: [string, string | undefined][] = [];
    const ports = new Map<string, number>();
    const net = new BoardNetwork({ addresses, ports, link: () => ({ ethernet: true, ap: false, station: null }), isSoftApAddress: () => false, ntpTime: () => null, onListening: (i, u) => seen.push([i, u]) });
    expect(net.listenPort('127.0.0.2')).toBe(0); // first boot: any port
    const firmware = createServer((s) => s.end());
    await new Promise<void>((r) => firmware.listen(0, '127.0.0.2', r));
    const port = (firmware.address() as { port: number }).port;
    net.listening('127.0.0.2', port);
    expect(seen.at(-1)).toEqual(['ethernet', `http://127.0.0.2:${port}`]);
    await new Promise((r) => firmware.close(r));

    await net.firmwareGone(true);
    expect(seen.at(-1)).toEqual(['ethernet', undefined]);
    const res = await fetch(`http://127.0.0.2:${port}/api/status`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as { error: string }).error).toBe('board_restarting');

    expect(net.listenPort('127.0.0.2')).toBe(port); // the firmware binds the same port again; the stand-in is gone
    await new Promise((r) => setTimeout(r, 50));
    await expect(fetch(`http://127.0.0.2:${port}/`)).rejects.toThrow();
    expect(ports.get('127.0.0.2')).toBe(port);
    await net.close();
  });
});
