/// <reference path="../types/socket-listener.d.ts" />
// One listener per interface, bound to that interface's address: Moddable's socket Listener binds lwIP
// to `address` (modules/network/socket/lwip/modSocket.c, xs_listener: ipaddr_aton + tcp_bind). So a
// request on the SoftAP listener came in on the SoftAP, and the core knows its interface for real
// (DESIGN.md section 5). A listener exists while its interface has an address: bound when the address
// comes (InterfaceAddresses), closed when it goes; the connections it accepted end on their own.
// Each accepted connection is served from its first byte by http-connection.ts, not by the SDK's
// `http` Server: http.js reads a request line of any length into memory before anything can refuse
// it, and keeps no count of connections that have not sent one (docs/board-http-limits.md).
import { Listener, Socket } from 'socket';
import type { HttpHandler, Iface, RequestMemory } from '../../../hal/network.ts';
import { HttpConnection, type ConnectionSocket } from './http-connection.ts';
import type { ListenerLimits } from './http-limits.ts';
import { HttpRefusal } from './http-text.ts';
import type { InterfaceAddresses } from './interfaces.ts';

const HTTP_PORT = 80;

export interface ListenerOptions {
  limits: ListenerLimits;
  stationMacOf: (address: string) => string | undefined;
  log: (message: string) => void;
}

interface Served {
  handler: HttpHandler;
  memory: RequestMemory;
}

export class InterfaceListeners {
  private readonly served = new Map<Iface, Served>();
  private readonly listeners = new Map<Iface, Listener>();
  /** Connections open per interface, from their accept to their close. */
  private readonly open = new Map<Iface, number>();

  constructor(
    private readonly addresses: InterfaceAddresses,
    private readonly options: ListenerOptions,
  ) {
    addresses.onChange((iface, address) => this.bind(iface, address));
  }

  listen(iface: Iface, handler: HttpHandler, memory: RequestMemory): void {
    this.served.set(iface, { handler, memory });
    this.bind(iface, this.addresses.get(iface));
  }

  private bind(iface: Iface, address: string | undefined): void {
    const previous = this.listeners.get(iface);
    if (previous) {
      this.listeners.delete(iface);
      previous.close();
    }
    const served = this.served.get(iface);
    if (!served || address === undefined) return;
    let listener: Listener;
    try {
      listener = new Listener({ port: HTTP_PORT, address });
    } catch (err) {
      return this.options.log(`${iface}: cannot listen on ${address}:${HTTP_PORT} (${err instanceof Error ? err.message : String(err)})`);
    }
    listener.callback = () => this.accept(iface, listener, served);
    this.listeners.set(iface, listener);
    this.options.log(`${iface}: listening on ${address}:${HTTP_PORT}`);
  }

  private accept(iface: Iface, listener: Listener, served: Served): void {
    let socket: ConnectionSocket;
    try {
      socket = new Socket({ listener, noDelay: true } as unknown as { listener: Listener }) as unknown as ConnectionSocket;
    } catch {
      return; // the peer left before it was accepted
    }
    const { limits, stationMacOf } = this.options;
    const count = this.open.get(iface) ?? 0;
    if (count >= limits.pendingPerInterface * 2) {
      // As many connections are being refused already as are served: this one is closed at once, as
      // lwIP drops a connection it has no PCB for (16 on ESP-IDF), and costs nothing.
      socket.close();
      return;
    }
    const refusal = count >= limits.pendingPerInterface ? new HttpRefusal(503, 'board_busy', `${limits.pendingPerInterface} requests are in progress on this interface`, { 'retry-after': '1' }) : undefined;
    this.open.set(iface, count + 1);
    const connection = new HttpConnection(socket, iface, {
      handler: served.handler,
      memory: served.memory,
      limits,
      stationMacOf,
      ...(refusal ? { refusal } : {}),
      done: () => this.open.set(iface, Math.max(0, (this.open.get(iface) ?? 1) - 1)),
    });
    connection.start();
  }
}
