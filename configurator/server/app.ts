// The configurator's server: the page (web/, bundled and served by the web kit, docs/web-kit.md),
// its API (handlers.ts, from the route table schema/routes.ts) and the security around both
// (docs/configurator-security.md). Listens on loopback unless told otherwise.
import express from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { fileURLToPath } from 'node:url';
import { pageRoutes } from '../../web-common/server/page.ts';
import { hostGuard, pageRequestGuard, type GuardRefusal } from '../../web-common/server/request-guard.ts';
import { securityHeaders } from '../../web-common/server/security-headers.ts';
import { ControllerLink, LINK_DEFAULTS, type LinkOptions } from './controller-link.ts';
import { DeviceOps } from './device-ops.ts';
import { errorMiddleware, sendError } from './errors.ts';
import { apiRoutes } from './handlers.ts';
import { sessionCookieName, Sessions } from './sessions.ts';
import { SiteStore } from './site-store.ts';

const WEB = fileURLToPath(new URL('../web/', import.meta.url));

export interface ConfiguratorOptions {
  /** The site file (created when missing). */
  site: string;
  host?: string;
  port?: number;
  /** Requests to controllers (time-out, answer sizes). */
  link?: Partial<LinkOptions>;
  /** Where the server's own lines go (never a password, a token or a request body). */
  log?: (line: string) => void;
}

export interface RunningConfigurator {
  url: string;
  store: SiteStore;
  sessions: Sessions;
  close(): Promise<void>;
}

/** The Host headers this server answers: its loopback names, and the address it listens on (all of this machine's for a wildcard). */
function hostsFor(host: string, port: number): Set<string> {
  const addresses = new Set([host, '127.0.0.1', 'localhost', '::1']);
  if (host === '0.0.0.0' || host === '::') for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) addresses.add(a.address);
  return new Set([...addresses].map((a) => `${a.includes(':') ? `[${a}]` : a}:${port}`.toLowerCase()));
}

export async function startConfigurator(o: ConfiguratorOptions): Promise<RunningConfigurator> {
  const log = o.log ?? (() => undefined);
  const host = o.host ?? '127.0.0.1';
  const store = SiteStore.open(o.site);
  const sessions = new Sessions();
  const linkOptions = { ...LINK_DEFAULTS, ...o.link };
  const ops = new DeviceOps(store, (c) => new ControllerLink(c.name, c.address, linkOptions));

  let allowed = new Set<string>();
  const refuse = (res: express.Response, r: GuardRefusal) => sendError(res, r.status, r.code, r.message);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(hostGuard(() => allowed, refuse));
  app.use(securityHeaders());
  // The session is looked up only for the page's own API requests (past the guard), and never
  // opened here: only a log-in opens one (handlers.ts, sessions.ts).
  const findSession: express.RequestHandler = (req, res, next) => {
    res.locals.session = sessions.find(req.headers.cookie);
    next();
  };
  app.use('/api', pageRequestGuard(refuse), findSession, (_req, res, next) => (res.set('cache-control', 'no-store'), next()), apiRoutes(store, ops, sessions));
  // The page's three files at their exact paths (`/app.js/` and `/APP.JS` are the 404 below).
  app.use(pageRoutes(WEB, { page: '/', assets: '/' }));
  // Browsers ask for it on their own; the page has none.
  app.get('/favicon.ico', (_req, res) => void res.status(204).end());
  app.use((_req, res) => sendError(res, 404, 'route_not_found', 'No such page'));
  app.use(errorMiddleware(log));

  const server: Server = createServer({ requestTimeout: 120_000, headersTimeout: 20_000, maxHeaderSize: 16 * 1024 }, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  allowed = hostsFor(host, port);
  sessions.cookieName = sessionCookieName(port);
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/`,
    store,
    sessions,
    close: async () => {
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      store.close();
    },
  };
}
