// Serves the cloud over HTTP: open the store, build the app, listen. Used by `fleet serve` (npm start)
// in each of its workers, the tests and the bench.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCloud, type Cloud, type CloudDeps } from './app.ts';
import type { CloudConfig } from './config.ts';
import { openStore } from './store/index.ts';
import { installTransportHooks } from './transport.ts';
import type { CloudStore } from './store/types.ts';

export interface RunningCloud {
  url: string;
  server: Server;
  cloud: Cloud;
  store: CloudStore;
  /** Closes at once: connections with a request in flight are cut (tests). */
  close(): Promise<void>;
  /**
   * The SIGTERM close (docs/cloud-workers.md): stops accepting; idle connections are closed, and each
   * request in flight is finished and its connection closed after its answer; after `graceMs` what is
   * left is cut. Then the cloud stops (the inventory writes what it holds) and the store is closed.
   * Resolves with the connections cut at the time-out.
   */
  shutdown(graceMs: number): Promise<{ cut: number }>;
}

export async function startCloudServer(
  config: CloudConfig,
  opts: Partial<Omit<CloudDeps, 'config'>> = {},
): Promise<RunningCloud> {
  const store = opts.store ?? (await openStore(config.databaseUrl, { workers: opts.workers ?? 1 }));
  const cloud = createCloud({ ...opts, config, store });
  await cloud.start();
  const { limits } = cloud;
  const server = createServer(
    {
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: limits.connectionsCheckingIntervalMs,
      maxHeaderSize: limits.maxHeaderBytes,
      // The listener answers a missing Host itself, as JSON (node's own 400 has no body).
      requireHostHeader: false,
    },
    cloud.listener,
  );
  // Headers are bounded in bytes (maxHeaderSize); past maxHeaderFields the listener answers 431
  // instead of node silently dropping the extra ones.
  server.maxHeadersCount = 0;
  // The answers not finished yet, so that a shutdown lets them finish and then closes their connections.
  const inFlight = new Set<ServerResponse>();
  let closing = false;
  const track = (res: ServerResponse) => {
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    // A request that arrives on a kept-alive connection during a shutdown is answered, then closed.
    if (closing && !res.headersSent) res.setHeader('connection', 'close');
  };
  server.prependListener('request', (_req, res) => track(res));
  // Parse errors, header overflow, time-outs, CONNECT and unknown Expect values answer JSON too.
  installTransportHooks(server);
  // `Expect: 100-continue`: refuse an oversized backup before the client sends it (no 100 is sent).
  server.on('checkContinue', (req, res) => {
    track(res);
    if (!cloud.refuseBeforeContinue(req, res)) {
      res.writeContinue();
      cloud.listener(req, res);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: config.port, host: config.host, backlog: limits.listenBacklog }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    server,
    cloud,
    store,
    async close() {
      await cloud.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (!opts.store) await store.close();
    },
    async shutdown(graceMs) {
      closing = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // server.close() closes the connections idle now; these close those that go idle later (their
      // answer was written before the shutdown began, so it could not say Connection: close).
      server.closeIdleConnections();
      const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([closed.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs)))]);
      clearTimeout(timer);
      clearInterval(idleSweep);
      const cut = late ? inFlight.size : 0;
      if (late) {
        server.closeAllConnections();
        await closed;
      }
      await cloud.stop();
      if (!opts.store) await store.close();
      return { cut };
    },
  };
}
