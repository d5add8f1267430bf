// The UART bootloader of a virtual ESP32-S3, packet by packet (esptool docs, "Serial Protocol"):
// the ROM's answers (4 status bytes) and the stub's (2), and the error statuses for bad packets,
// bad checksums, broken deflate streams and regions outside the flash. esptool-js drives the same
// loader end to end in test/harness/esptool-*.test.ts.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FlashImage } from '../../firmware/virtual-esp32/flash-image.ts';
import { RomLoader } from '../../firmware/virtual-esp32/rom/loader.ts';
import { CMD, SYNC_PAYLOAD } from '../../firmware/virtual-esp32/rom/protocol.ts';
import { Esp32s3Registers } from '../../firmware/virtual-esp32/rom/registers.ts';
import { Efuses } from '../../firmware/virtual-esp32/efuse.ts';
import { SlipDecoder, slipEncode } from '../../firmware/virtual-esp32/rom/slip.ts';
import { imageChecksum } from '../../firmware/image/app-image.ts';
import { CHIPS } from '../../firmware/image/chips.ts';

const FLASH_BYTES = 0x100000;
let dir: string;
let flash: FlashImage;
let sent: Uint8Array[];
let left: string[];
let bauds: number[];
let loader: RomLoader;

function request(command: number, data: Uint8Array, checksum = 0): Uint8Array {
  const p = new Uint8Array(8 + data.length);
  p[0] = 0x00;
  p[1] = command;
  p[2] = data.length & 0xff;
  p[3] = data.length >> 8;
  new DataView(p.buffer).setUint32(4, checksum, true);
  p.set(data, 8);
  return p;
}

const le = (...words: number[]) => {
  const out = new Uint8Array(words.length * 4);
  words.forEach((w, i) => new DataView(out.buffer).setUint32(i * 4, w, true));
  return out;
};

/** Sends one packet and waits for the loader to have handled it. */
async function ask(command: number, data: Uint8Array = new Uint8Array(0), checksum = 0): Promise<Uint8Array[]> {
  const before = sent.length;
  loader.receive(request(command, data, checksum));
  await loader.idle();
  return sent.slice(before);
}

const statusOf = (r: Uint8Array, stub: boolean) => [...r.subarray(r.length - (stub ? 2 : 4))];
const dataBlock = (payload: Uint8Array, seq: number) => ({ data: new Uint8Array([...le(payload.length, seq, 0, 0), ...payload]), checksum: imageChecksum(payload) });

async function startStub(): Promise<void> {
  const text = new Uint8Array(64).fill(0x11);
  await ask(CMD.MEM_BEGIN, le(text.length, 1, 0x1800, 0x40378000));
  const b = dataBlock(text, 0);
  await ask(CMD.MEM_DATA, b.data, b.checksum);
  const r = await ask(CMD.MEM_END, le(0, 0x40378004));
  expect(statusOf(r[0]!, false)).toEqual([0, 0, 0, 0]);
  expect(Buffer.from(r[1]!).toString()).toBe('OHAI');
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rom-loader-'));
  flash = FlashImage.open(join(dir, 'flash.bin'), FLASH_BYTES);
  sent = [];
  left = [];
  bauds = [];
  loader = new RomLoader({
    flash,
    chip: CHIPS.esp32s3,
    registers: new Esp32s3Registers({ efuses: new Efuses({ macAddress: '24:0A:C4:10:00:2A', hmacKey: Buffer.alloc(32, 0x5a), hmacKeyBlock: 3 }), flashSizeBytes: FLASH_BYTES }),
    send: (p) => sent.push(p),
    setBaud: (b) => bauds.push(b),
    leave: (how) => left.push(how),
  });
});
afterEach(() => {
  loader.close();
  flash.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SLIP framing', () => {
  it('escapes C0 and DB and drops a packet with a bad escape', () => {
    expect([...slipEncode(Uint8Array.of(0x01, 0xc0, 0xdb, 0x02))]).toEqual([0xc0, 0x01, 0xdb, 0xdc, 0xdb, 0xdd, 0x02, 0xc0]);
    const got: number[][] = [];
    const d = new SlipDecoder((p) => got.push([...p]));
    d.push(Uint8Array.of(0x55, 0xc0, 0x01, 0xdb, 0xdc, 0xc0, 0xc0, 0x02, 0xdb, 0x00, 0xc0, 0xc0, 0x03, 0xc0));
    expect(got).toEqual([[0x01, 0xc0], [0x03]]);
    expect(d.invalid).toBe(1);
  });
});

describe('the ROM loader', () => {
  it('answers SYNC eight times with a non-zero value, and reads registers: magic, eFuse MAC, JEDEC id', async () => {
    const r = await ask(CMD.SYNC, SYNC_PAYLOAD);
    expect(r).toHaveLength(8);
    expect(new DataView(r[0]!.buffer).getUint32(4, true)).not.toBe(0);
    const reg = async (a: number) => new DataView((await ask(CMD.READ_REG, le(a)))[0]!.buffer).getUint32(4, true);
    expect(await reg(0x40001000)).toBe(0x9);
    expect((await reg(0x60007044)).toString(16)).toBe('c410002a');
    expect((await reg(0x60007048)).toString(16)).toBe('240a');
    await ask(CMD.WRITE_REG, le(0x60002020, 0x7000009f, 0xffffffff, 0));
    await ask(CMD.WRITE_REG, le(0x60002000, 1 << 18, 0xffffffff, 0));
    expect(await reg(0x60002000)).toBe(0); // the user command finished
    expect((await reg(0x60002058)).toString(16)).toBe('1440c8'); // GD C8 40, 1 MB (0x14)
  });

  it('gives the ROM error statuses for an unknown or stub-only command, a wrong size field, a bad checksum, a region outside the flash', async () => {
    expect(statusOf((await ask(0x55))[0]!, false)).toEqual([1, 0x05, 0, 0]);
    expect(statusOf((await ask(CMD.READ_FLASH, le(0, 16, 16, 1)))[0]!, false)).toEqual([1, 0x05, 0, 0]);
    const wrongSize = request(CMD.READ_REG, le(0x40001000));
    wrongSize[2] = 9;
    loader.receive(wrongSize);
    await loader.idle();
    expect(statusOf(sent.at(-1)!, false)).toEqual([1, 0x05, 0, 0]);
    expect(statusOf((await ask(CMD.FLASH_BEGIN, le(0x2000, 1, 0x4000, FLASH_BYTES - 0x1000, 0)))[0]!, false)).toEqual([1, 0x06, 0, 0]);
    expect(statusOf((await ask(CMD.FLASH_BEGIN, le(0x1000, 1, 0x1000, 0x1000, 0)))[0]!, false)).toEqual([0, 0, 0, 0]);
    const b = dataBlock(new Uint8Array(0x1000).fill(0x42), 0);
    expect(statusOf((await ask(CMD.FLASH_DATA, b.data, b.checksum ^ 1))[0]!, false)).toEqual([1, 0x07, 0, 0]);
    expect(statusOf((await ask(CMD.FLASH_DATA, b.data, b.checksum))[0]!, false)).toEqual([0, 0, 0, 0]);
    expect(flash.read(0x1000, 4)).toEqual(Uint8Array.of(0x42, 0x42, 0x42, 0x42));
  });

  it('returns the MD5 as 32 hex characters, changes the baud rate after answering at the old one, and runs the app on FLASH_END', async () => {
    flash.program(0, Uint8Array.of(1, 2, 3));
    const md5 = (await ask(CMD.SPI_FLASH_MD5, le(0, 0x1000, 0, 0)))[0]!;
    expect(Buffer.from(md5.subarray(8, 40)).toString()).toBe(createHash('md5').update(flash.read(0, 0x1000)).digest('hex'));
    expect(statusOf((await ask(CMD.CHANGE_BAUDRATE, le(921600, 0)))[0]!, false)).toEqual([0, 0, 0, 0]);
    expect(bauds).toEqual([921600]);
    await ask(CMD.FLASH_BEGIN, le(0, 0, 0x4000, 0, 0));
    await ask(CMD.FLASH_END, le(1));
    expect(left).toEqual(['run']);
  });
});

describe('the stub (recognised after MEM_END)', () => {
  it('greets with OHAI, answers with 2 status bytes and stub error codes', async () => {
    await startStub();
    expect(loader.stubRunning).toBe(true);
    expect(statusOf((await ask(0x55))[0]!, true)).toEqual([1, 0xff]);
    expect(statusOf((await ask(CMD.FLASH_DEFL_DATA, dataBlock(Uint8Array.of(1), 0).data))[0]!, true)).toEqual([1, 0xc6]);
    expect(statusOf((await ask(CMD.ERASE_REGION, le(0x1001, 0x1000)))[0]!, true)).toEqual([1, 0xc0]);
    expect(statusOf((await ask(CMD.FLASH_BEGIN, le(0x3000, 1, 0x4000, FLASH_BYTES)))[0]!, true)).toEqual([1, 0xc0]);
  });

  it('writes deflate data, refuses a broken stream with INFLATE_ERROR and a short one with NOT_ENOUGH_DATA', async () => {
    await startStub();
    const data = new Uint8Array(0x3000).map((_, i) => (i * 7) & 0xff);
    const z = deflateSync(data);
    await ask(CMD.FLASH_DEFL_BEGIN, le(data.length, 1, 0x4000, 0x20000));
    const b = dataBlock(z, 0);
    expect(statusOf((await ask(CMD.FLASH_DEFL_DATA, b.data, b.checksum))[0]!, true)).toEqual([0, 0]);
    expect(statusOf((await ask(CMD.FLASH_DEFL_END, le(1)))[0]!, true)).toEqual([0, 0]);
    expect(Buffer.from(flash.read(0x20000, data.length)).equals(Buffer.from(data))).toBe(true);
    const md5 = (await ask(CMD.SPI_FLASH_MD5, le(0x20000, data.length, 0, 0)))[0]!;
    expect(Buffer.from(md5.subarray(8, 24)).toString('hex')).toBe(createHash('md5').update(data).digest('hex'));

    await ask(CMD.FLASH_DEFL_BEGIN, le(0x1000, 1, 0x4000, 0x40000));
    const garbage = dataBlock(Uint8Array.of(0x78, 0x9c, 0xff, 0xff, 0xff, 0x00, 0x12), 0);
    expect(statusOf((await ask(CMD.FLASH_DEFL_DATA, garbage.data, garbage.checksum))[0]!, true)).toEqual([1, 0xc7]);

    await ask(CMD.FLASH_DEFL_BEGIN, le(data.length, 1, 0x4000, 0x60000));
    const half = dataBlock(deflateSync(data.subarray(0, 0x1000)), 0);
    await ask(CMD.FLASH_DEFL_DATA, half.data, half.checksum);
    expect(statusOf((await ask(CMD.FLASH_DEFL_END, le(1)))[0]!, true)).toEqual([1, 0xc8]);
  });

  it('reads flash in packets within the unacknowledged window, then sends the MD5', async () => {
    await startStub();
    flash.program(0x8000, new Uint8Array(300).fill(0x5a));
    const r = await ask(CMD.READ_FLASH, le(0x8000, 300, 128, 2));
    expect(statusOf(r[0]!, true)).toEqual([0, 0]);
    expect(sent.slice(-2).map((p) => p.length)).toEqual([128, 128]); // two in flight, then it waits
    loader.receive(le(128)); // acknowledgements are handled at once, outside the command queue
    expect(sent.at(-1)!.length).toBe(44);
    loader.receive(le(256));
    loader.receive(le(300));
    expect(Buffer.from(sent.at(-1)!).toString('hex')).toBe(createHash('md5').update(new Uint8Array(300).fill(0x5a)).digest('hex'));
  });
});
