/// <reference path="../types/http-detach.d.ts" />
// One `http` Server per interface, bound to that interface's address: the classic Server hands its
// dictionary to the socket Listener, which binds lwIP to `address` (modules/network/socket/lwip/
// modSocket.c, xs_listener: ipaddr_aton + tcp_bind). So a request on the SoftAP listener came in on the
// SoftAP, and the core knows its interface for real (DESIGN.md section 5). A listener exists while its
// interface has an address: bound when the address comes (InterfaceAddresses), closed when it goes.
// Each connection is detached at its status line and served by http-connection.ts. http.js itself
// has no time-out: a connection that never sends its status line is closed after headTimeoutMs here.
import { Server, type Request } from 'http';
import Timer from 'timer';
import type { HttpHandler, Iface } from '../../../hal/network.ts';
import { HttpConnection } from './http-connection.ts';
import type { ListenerLimits } from './http-limits.ts';
import { HttpRefusal } from './http-text.ts';
import type { InterfaceAddresses } from './interfaces.ts';

const HTTP_PORT = 80;

export interface ListenerOptions {
  limits: ListenerLimits;
  stationMacOf: (address: string) => string | undefined;
  log: (message: string) => void;
}

export class InterfaceListeners {
  private readonly handlers = new Map<Iface, HttpHandler>();
  private readonly servers = new Map<Iface, Server>();
  private readonly inProgress = new Map<Iface, number>();
  /** Connections accepted but without a status line yet, and their time-outs. */
  private readonly silent = new Map<Request, Timer>();

  constructor(
    private readonly addresses: InterfaceAddresses,
    private readonly options: ListenerOptions,
  ) {
    addresses.onChange((iface, address) => this.bind(iface, address));
  }

  listen(iface: Iface, handler: HttpHandler): void {
    this.handlers.set(iface, handler);
    this.bind(iface, this.addresses.get(iface));
  }

  private bind(iface: Iface, address: string | undefined): void {
    const previous = this.servers.get(iface);
    if (previous) {
      this.servers.delete(iface);
      previous.close();
    }
    const handler = this.handlers.get(iface);
    if (!handler || address === undefined) return;
    let server: Server;
    try {
      server = new Server({ port: HTTP_PORT, address });
    } catch (err) {
      return this.options.log(`${iface}: cannot listen on ${address}:${HTTP_PORT} (${err instanceof Error ? err.message : String(err)})`);
    }
    const listeners = this;
    server.callback = function (message, path, method) {
      if (message === Server.connection) return listeners.awaitStatus(server, this);
      if (message === Server.error) return listeners.forget(this); // left before its status line
      if (message !== Server.status) return; // nothing else reaches a detached connection
      listeners.forget(this);
      listeners.accept(iface, server.detach(this), String(method), String(path), handler);
    };
    this.servers.set(iface, server);
    this.options.log(`${iface}: listening on ${address}:${HTTP_PORT}`);
  }

  private awaitStatus(server: Server, connection: Request): void {
    this.silent.set(
      connection,
      Timer.set(() => {
        this.silent.delete(connection);
        try {
          server.detach(connection).close();
        } catch {
          /* already gone */
        }
      }, this.options.limits.headTimeoutMs),
    );
  }

  private forget(connection: Request): void {
    const timer = this.silent.get(connection);
    if (timer === undefined) return;
    this.silent.delete(connection);
    Timer.clear(timer);
  }

  private accept(iface: Iface, socket: ReturnType<Server['detach']>, method: string, target: string, handler: HttpHandler): void {
    const { limits, stationMacOf } = this.options;
    const count = this.inProgress.get(iface) ?? 0;
    const refusal = count >= limits.pendingPerInterface ? new HttpRefusal(503, 'board_busy', `${limits.pendingPerInterface} requests are in progress on this interface`, { 'retry-after': '1' }) : undefined;
    this.inProgress.set(iface, count + 1);
    const connection = new HttpConnection(socket, iface, method, target, {
      handler,
      limits,
      stationMacOf,
      ...(refusal ? { refusal } : {}),
      done: () => this.inProgress.set(iface, Math.max(0, (this.inProgress.get(iface) ?? 1) - 1)),
    });
    connection.start();
  }
}
