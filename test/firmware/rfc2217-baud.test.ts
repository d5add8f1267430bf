// SET-BAUDRATE on a virtual board's RFC 2217 port (harness/transport/rfc2217-server.ts): the
// host side of the line takes the rate asked for and the server answers with it, as ser2net does;
// a rate the line cannot take, or 0 (a query), is answered with the rate in force; a new client
// starts at 115200. Where the host side and the chip's UART disagree, each reads the other's bytes
// as a UART at the wrong rate does (uart.ts resample).
import { afterEach, describe, expect, it } from 'vitest';
import { Rfc2217Server } from '../../harness/transport/rfc2217-server.ts';
import { resample } from '../../firmware/chip/uart.ts';
import { Rfc2217Transport } from '../../harness/transport/rfc2217.ts';

let server: Rfc2217Server | undefined;
let client: Rfc2217Transport | undefined;
afterEach(async () => {
  await client?.disconnect();
  await server?.close();
});

async function open(rates: number[]) {
  server = await Rfc2217Server.listen('127.0.0.1', { data: () => undefined, control: () => undefined, baud: (r) => void rates.push(r), purgeReceive: () => undefined });
  client = new Rfc2217Transport(server.url);
  await client.connect(115200);
  return client;
}

describe('SET-BAUDRATE on the RFC 2217 port', () => {
  it('answers with the rate asked for, and with the rate in force for 0 or a rate out of range', async () => {
    const rates: number[] = [];
    const t = await open(rates);
    await t.setBaudRate(921600);
    expect(t.serverBaudRate).toBe(921600);
    await t.setBaudRate(0);
    expect(t.serverBaudRate).toBe(921600);
    await t.setBaudRate(100);
    expect(t.serverBaudRate).toBe(921600);
    await t.setBaudRate(6_000_000);
    expect(t.serverBaudRate).toBe(921600);
    await t.setBaudRate(115200);
    expect(t.serverBaudRate).toBe(115200);
    // The connection's default, then what the client set; refused values never reach the line.
    expect(rates).toEqual([115200, 115200, 921600, 115200]);
  });

  it('gives a new client the default rate again', async () => {
    const rates: number[] = [];
    const t = await open(rates);
    await t.setBaudRate(921600);
    await t.disconnect();
    const again = new Rfc2217Transport(server!.url);
    client = again;
    await again.connect(460800);
    expect(rates).toEqual([115200, 115200, 921600, 115200, 460800]);
  });
});

describe('a line at two rates', () => {
  it('passes bytes at one rate unchanged and garbles them at two', () => {
    // The start of a SLIP-framed SYNC request.
    const bytes = Uint8Array.from([0xc0, 0x00, 0x08, 0x24, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x07, 0x12, 0x20, 0x55, 0x55, 0x55, 0x55]);
    expect(resample(bytes, 115200, 115200)).toBe(bytes);
    const slowRead = resample(bytes, 921600, 115200);
    const fastRead = resample(bytes, 115200, 921600);
    expect(Buffer.from(slowRead).equals(Buffer.from(bytes))).toBe(false);
    expect(Buffer.from(fastRead).equals(Buffer.from(bytes))).toBe(false);
    // Read 8 times too fast, each byte is seen as several; 8 times too slow, several bytes as one.
    expect(fastRead.length).toBeGreaterThan(bytes.length);
    expect(slowRead.length).toBeLessThan(bytes.length);
    // A little off (2 %) still reads: UARTs tolerate a few per cent.
    expect(Buffer.from(resample(bytes, 115200, 117500)).equals(Buffer.from(bytes))).toBe(true);
  });
});
