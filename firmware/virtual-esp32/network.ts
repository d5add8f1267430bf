// A virtual board's network beneath lwIP (DESIGN.md section 6): each interface is a loopback address
// of the host (127.0.0.0/8), and the chip decides what the firmware's sockets may reach and from which
// address (firmware/sdk-host/natives/fw_host_socket_shim.c asks):
// - its own addresses, always;
// - a board's SoftAP address only from a station associated with that AP, from the station's address
//   (so the AP's board tells its stations apart, as its DHCP leases do);
// - anything else (the cloud, the broker: the bench's services on loopback) through Ethernet with a
//   link, or through a station associated with the site's Wi-Fi (an infrastructure AP); a board's
//   SoftAP routes nowhere;
// - NTP (UDP to port 123) reaches this board's NTP server, which answers with the bench's time while
//   the board's clock is meant to synchronize.
// A listener keeps its port across restarts (port 80 on a chip: here a port of the host, the same
// one each time, so the board's URLs stay); while the board restarts, a stand-in answers on it 503
// board_restarting with Retry-After, so that a client can tell a restart from a dead board
// (docs/board-http-limits.md).
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { Iface } from '../src/hal/network.ts';

export type NetIface = 'ethernet' | 'ap' | 'station';

export interface NetworkOptions {
  /** The loopback address of each interface. */
  addresses: Record<NetIface, string>;
  /** The port each listening address keeps (kept by the owner across boards started again). */
  ports?: Map<string, number>;
  /** What the radios say now: which interfaces are up, and the station's AP. */
  link: () => { ethernet: boolean; ap: boolean; station: { apAddress: string; infrastructure: boolean } | null };
  /** Addresses that are some board's SoftAP (reachable only by association). */
  isSoftApAddress: (address: string) => boolean;
  /** The bench's time for this board's clock, or null while its NTP server does not answer. */
  ntpTime: () => number | null;
  /** A listener of the firmware is bound (its URL), or gone (undefined). */
  onListening: (iface: Iface, url: string | undefined) => void;
}

const NTP_PORT = 123;
/** Seconds from 1900 (NTP's epoch) to 1970. */
const NTP_EPOCH_OFFSET = 2_208_988_800;

export class BoardNetwork {
  /** The port each listening address keeps (the board's port 80). */
  private readonly ports: Map<string, number>;
  private readonly standInSockets = new WeakMap<Server, Set<Socket>>();
  private readonly standIns = new Map<string, Server>();
  private ntp: UdpSocket | undefined;
  private ntpPort = 0;

  constructor(private readonly o: NetworkOptions) {
    this.ports = o.ports ?? new Map();
  }

  /** Starts the board's NTP server (once). */
  async start(): Promise<void> {
    if (this.ntp) return;
    const ntp = createSocket('udp4');
    ntp.on('message', (packet, from) => this.answerNtp(ntp, packet, from.address, from.port));
    ntp.on('error', () => undefined);
    await new Promise<void>((resolve) => ntp.bind(0, '127.0.0.1', resolve));
    this.ntp = ntp;
    this.ntpPort = ntp.address().port;
  }

  private answerNtp(ntp: UdpSocket, packet: Buffer, address: string, port: number): void {
    const now = this.o.ntpTime();
    if (now === null || packet.length < 48 || (packet[0]! & 7) !== 3) return;
    const answer = Buffer.alloc(48);
    answer[0] = (4 << 3) | 4; // version 4, mode 4 (server)
    answer[1] = 1; // stratum 1
    const seconds = Math.floor(now / 1000) + NTP_EPOCH_OFFSET;
    const fraction = Math.floor(((now % 1000) / 1000) * 2 ** 32);
    for (const at of [32, 40]) {
      answer.writeUInt32BE(seconds >>> 0, at);
      answer.writeUInt32BE(fraction >>> 0, at + 4);
    }
    ntp.send(answer, port, address);
  }

  ifaceOf(address: string): NetIface | undefined {
    return (Object.entries(this.o.addresses) as [NetIface, string][]).find(([, a]) => a === address)?.[0];
  }

  /** Where a TCP connection (kind 0) or UDP datagram (kind 1) to address:port goes, and from where. */
  route(kind: number, address: string, port: number): [source: string, address: string, port: number] {
    const own = this.ifaceOf(address);
    if (own) return [address, address, port];
    const link = this.o.link();
    const ntp = kind === 1 && port === NTP_PORT;
    if (this.o.isSoftApAddress(address)) {
      if (link.station?.apAddress === address) return [this.o.addresses.station, address, port];
      throw new Error(`${address} is a SoftAP this board is not associated with`);
    }
    const source = link.ethernet ? this.o.addresses.ethernet : link.station?.infrastructure ? this.o.addresses.station : null;
    if (!source) throw new Error(`no interface of this board reaches ${address}`);
    return ntp ? [source, '127.0.0.1', this.ntpPort] : [source, address, port];
  }

  /** The port the firmware's listener on `address` binds: the one it had before, or any (0). */
  listenPort(address: string): number {
    const standIn = this.standIns.get(address);
    if (standIn) {
      standIn.close();
      this.standIns.delete(address);
    }
    return this.ports.get(address) ?? 0;
  }

  listening(address: string, port: number): void {
    this.ports.set(address, port);
    const iface = this.ifaceOf(address);
    if (iface) this.o.onListening(iface === 'ap' ? 'softap' : iface, `http://${address}:${port}`);
  }

  /** The firmware closed its listener on the address (its interface went down); the port stays its own. */
  unlistened(address: string): void {
    const iface = this.ifaceOf(address);
    if (iface) this.o.onListening(iface === 'ap' ? 'softap' : iface, undefined);
  }

  /**
   * The firmware is gone (a reset): its listeners with it. Until it listens again, a stand-in on each
   * port answers 503 board_restarting; `keep` false (power off) closes them instead.
   */
  async firmwareGone(restarting: boolean): Promise<void> {
    for (const address of this.ports.keys()) {
      const iface = this.ifaceOf(address);
      if (iface) this.o.onListening(iface === 'ap' ? 'softap' : iface, undefined);
    }
    if (!restarting) return this.closeStandIns();
    await Promise.all(
      [...this.ports].map(async ([address, port]) => {
        if (this.standIns.has(address)) return;
        const server = createServer(answerRestarting);
        server.on('error', () => undefined);
        const sockets = new Set<Socket>();
        this.standInSockets.set(server, sockets);
        server.on('connection', (socket) => {
          sockets.add(socket);
          socket.once('close', () => sockets.delete(socket));
        });
        this.standIns.set(address, server);
        await new Promise<void>((resolve) => {
          server.once('error', () => resolve());
          server.listen(port, address, () => resolve());
        });
      }),
    );
  }

  private async closeStandIns(): Promise<void> {
    const servers = [...this.standIns.values()];
    this.standIns.clear();
    // A client that never ends its side (a raw request left open) would hold close() forever.
    await Promise.all(
      servers.map(
        (s) =>
          new Promise((r) => {
            s.close(r);
            for (const socket of this.standInSockets.get(s) ?? []) socket.destroy();
          }),
      ),
    );
  }

  async close(): Promise<void> {
    await this.closeStandIns();
    this.ntp?.close();
    this.ntp = undefined;
  }
}

/** The bench's stand-in while a board restarts: 503 board_restarting with Retry-After, then FIN. */
export function answerRestarting(socket: Socket): void {
  socket.on('error', () => undefined);
  const body = JSON.stringify({ error: 'board_restarting', message: 'The board is restarting; try again shortly' });
  socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n${body}`);
}
