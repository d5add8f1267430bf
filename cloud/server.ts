// Serves the cloud over HTTP: open the store, build the app, listen. Used by `fleet serve` (npm start),
// the tests and the bench.
import { createServer, type Server } from 'node:http';
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
  close(): Promise<void>;
}

export async function startCloudServer(
  config: CloudConfig,
  opts: Partial<Omit<CloudDeps, 'config'>> = {},
): Promise<RunningCloud> {
  const store = opts.store ?? (await openStore(config.databaseUrl));
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
  // Parse errors, header overflow, time-outs, CONNECT and unknown Expect values answer JSON too.
  installTransportHooks(server);
  // `Expect: 100-continue`: refuse an oversized backup before the client sends it (no 100 is sent).
  server.on('checkContinue', (req, res) => {
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
  };
}
