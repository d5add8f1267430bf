// Serves the cloud over HTTP: open the store, build the app, listen. Used by `fleet serve` (npm start),
// the tests and the bench.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCloud, type Cloud, type CloudDeps } from './app.ts';
import type { CloudConfig } from './config.ts';
import { openStore } from './store/index.ts';
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
  const server = createServer({ keepAliveTimeout: 65_000, headersTimeout: 30_000, requestTimeout: 120_000 }, cloud.listener);
  // `Expect: 100-continue`: refuse an oversized backup before the client sends it (no 100 is sent).
  server.on('checkContinue', (req, res) => {
    if (!cloud.refuseBeforeContinue(req, res)) {
      res.writeContinue();
      cloud.listener(req, res);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
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
      cloud.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (!opts.store) await store.close();
    },
  };
}
