// Our RFC 2217 client against a third-party server, Debian's ser2net 4, in front of a real
// pseudo-terminal: the telnet negotiation is accepted, 8N1 and the baud rate reach the device's
// termios (read back with stty), every byte value crosses both ways (IAC doubled on the wire and
// undoubled), PURGE-DATA is answered. A pseudo-terminal cannot take modem lines, so ser2net never
// answers SET-CONTROL for DTR there, and the client says what it waited for. Modem lines and resets
// are tested against the virtual boards' RFC 2217 port (rfc2217-virtual-board.test.ts).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TimeoutError } from '../../harness/board.ts';
import { openPtyPair, type PtyPair } from '../../harness/pty.ts';
import { Rfc2217Transport } from '../../harness/transport/rfc2217.ts';
import { PortUnavailableError } from '../../harness/transport/transport.ts';
import { startSer2net, type Ser2net } from '../../harness/transport/ser2net.ts';

let dir: string;
let pty: PtyPair;
let ser2net: Ser2net;
let device: SerialPort;
const fromClient: number[] = [];

/** The device end's settings as the kernel holds them. */
const stty = () => execFileSync('stty', ['-F', pty.boardEnd, '-a'], { encoding: 'utf8' });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rfc2217-ser2net-'));
  pty = await openPtyPair(dir, 'uart');
  // ser2net opens the board end at 9600 7E2, so that 8N1 and 115200 can only come from the client.
  ser2net = await startSer2net(dir, pty.boardEnd, '9600e72');
  device = new SerialPort({ path: pty.harnessEnd, baudRate: 115200, autoOpen: false });
  await new Promise<void>((resolve, reject) => device.open((e) => (e ? reject(e) : resolve())));
  device.on('data', (c: Buffer) => fromClient.push(...c));
}, 30_000);

afterAll(async () => {
  await new Promise<void>((r) => (device?.isOpen ? device.close(() => r()) : r()));
  await ser2net?.stop();
  await pty?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, test: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !test(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!test()) throw new Error(`never saw ${what}`);
}

describe('the RFC 2217 client against ser2net', () => {
  it('negotiates, sets 8N1 and the rate on the device, and carries every byte value both ways', async () => {
    const t = new Rfc2217Transport(ser2net.url, { ackTimeoutMs: 1000 });
    await t.connect(115200);
    try {
      expect(t.serverBaudRate).toBe(115200);
      const settings = stty();
      expect(settings).toMatch(/speed 115200 baud/);
      expect(settings).toMatch(/(^|\s)cs8(\s|$)/);
      expect(settings).toMatch(/(^|\s)-parenb(\s|$)/);
      expect(settings).toMatch(/(^|\s)-cstopb(\s|$)/);

      const received: number[] = [];
      t.read((b) => received.push(...b));
      const every = Uint8Array.from({ length: 256 }, (_, i) => i);
      const iacs = new Uint8Array(64).fill(0xff);
      fromClient.length = 0;
      await t.write(every);
      await t.write(iacs);
      await until('320 bytes on the device', () => fromClient.length >= 320);
      expect(Buffer.from(fromClient).equals(Buffer.concat([every, iacs]))).toBe(true);

      device.write(Buffer.concat([iacs, every, Buffer.from('\r\n\r\0')]));
      await until('324 bytes from the device', () => received.length >= 324);
      expect(Buffer.from(received).equals(Buffer.concat([iacs, every, Buffer.from('\r\n\r\0')]))).toBe(true);
    } finally {
      await t.disconnect();
    }
  });

  it('changes the rate in place (SET-BAUDRATE answered with the rate in force) and purges', async () => {
    const t = new Rfc2217Transport(ser2net.url, { ackTimeoutMs: 1000 });
    await t.connect(115200);
    try {
      await t.setBaudRate(921600);
      expect(t.serverBaudRate).toBe(921600);
      expect(stty()).toMatch(/speed 921600 baud/);
      await t.setBaudRate(460800);
      expect(t.serverBaudRate).toBe(460800);
      expect(stty()).toMatch(/speed 460800 baud/);
      await t.purge();
      // Data still flows after the purge.
      fromClient.length = 0;
      await t.write(Uint8Array.of(0x55, 0xff, 0xaa));
      await until('3 bytes', () => fromClient.length >= 3);
      expect(fromClient).toEqual([0x55, 0xff, 0xaa]);
    } finally {
      await t.disconnect();
    }
  });

  it('names what it waited for when the server cannot set DTR on a pseudo-terminal', async () => {
    const t = new Rfc2217Transport(ser2net.url, { ackTimeoutMs: 500 });
    await t.connect(115200);
    try {
      const err = await t.setDTR(true).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TimeoutError);
      expect((err as Error).message).toBe(`timed out after 500 ms waiting for ${ser2net.url} to acknowledge SET-CONTROL DTR on`);
    } finally {
      await t.disconnect();
    }
  });
});

describe('the RFC 2217 client against what is not an RFC 2217 server', () => {
  const servers: Server[] = [];
  const sockets: import('node:net').Socket[] = [];
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });
  const serve = async (onConnection: (s: import('node:net').Socket) => void): Promise<string> => {
    const server = createServer((s) => {
      sockets.push(s);
      onConnection(s);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `rfc2217://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
  };

  it('refuses a URL that is not rfc2217://host:port', () => {
    expect(() => new Rfc2217Transport('rfc2217://127.0.0.1')).toThrow(PortUnavailableError);
    expect(() => new Rfc2217Transport('tcp://127.0.0.1:2217')).toThrow('not an rfc2217://host:port URL: tcp://127.0.0.1:2217');
  });

  it('reports a refused connection as an unavailable port', async () => {
    const url = await serve((s) => s.destroy());
    const closed = url.replace(/:\d+$/, ':1');
    await expect(new Rfc2217Transport(closed).connect(115200)).rejects.toThrow("cannot reach rfc2217://127.0.0.1:1: connection refused (is an RFC 2217 server listening there?)");
  });

  it('says so when a telnet server refuses the COM-PORT-OPTION', async () => {
    const url = await serve((s) => s.on('data', () => s.write(Uint8Array.of(0xff, 0xfe, 44)))); // IAC DONT COM-PORT-OPTION
    await expect(new Rfc2217Transport(url).connect(115200)).rejects.toThrow(`${url} refused the COM-PORT-OPTION (DONT 44): not an RFC 2217 port`);
  });

  it('gives up on a server that never agrees to it, naming what it waited for', async () => {
    const url = await serve(() => undefined);
    await expect(new Rfc2217Transport(url, { connectTimeoutMs: 300 }).connect(115200)).rejects.toThrow(`timed out after 300 ms waiting for ${url} to agree to the COM-PORT-OPTION (DO 44): is it an RFC 2217 server?`);
  });
});
