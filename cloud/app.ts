// Assembles the cloud: the Express 5 application with every route group, and the node:http listener
// that puts the OTA fast path in front of it.
import express, { type Request } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { pageRoutes } from '../web-common/server/page.ts';
import { adminRoutes } from './admin/routes.ts';
import { appconfigRoutes } from './appconfig/routes.ts';
import { AppConfigService } from './appconfig/service.ts';
import { Admission, type AdmissionStats } from './admission.ts';
import { BodyPool } from './body-pool.ts';
import { DeviceAuthenticator } from './auth/device-signature.ts';
import { createTokenVerifier, type TokenVerifier } from './auth/jwt.ts';
import { ConsoleSessions, sessionRoutes, superUserOrSession } from './console/server/session.ts';
import { MAX_BACKUP_BYTES } from './backup/ffce.ts';
import { backupFastPath, backupPusher, backupRoutes } from './backup/routes.ts';
import type { CloudConfig } from './config.ts';
import { deviceFastPath } from './device-fast-path.ts';
import { deviceHealthRoutes, healthReporter, healthReportTooLarge } from './device-health/routes.ts';
import { HealthService } from './device-health/service.ts';
import { ApiError } from './errors.ts';
import type { CloudFunction } from './functions.ts';
import { healthRoutes } from './health.ts';
import { errorMiddleware, renderError, sendJson } from './http.ts';
import { JSON_BODY_LIMIT_BYTES } from './json-body.ts';
import { HTTP_LIMITS, type HttpLimits } from './limits.ts';
import { jsonLineSink, LOG_MAX_RECORDS_PER_SECOND, LogLevels, LogRegistry, prettySink, type FunctionLogger, type LogSink } from './logging.ts';
import { openApiDocument } from './openapi.ts';
import { auditTrail } from './admin/audit.ts';
import { NO_PEERS, type Peers } from './peers/peers.ts';
import { workerLimits, workerShare } from './worker-share.ts';
import { HostedImages, imageRoutes } from './ota/image-routes.ts';
import { MAX_IMAGE_BYTES } from './ota/release-checks.ts';
import { OtaCheckRecorder } from './ota/inventory.ts';
import { ReleaseService } from './ota/releases.ts';
import { otaFastPath, otaRoutes } from './ota/routes.ts';
import { OtaService } from './ota/service.ts';
import { guardStore } from './store/guard.ts';
import type { CloudStore } from './store/types.ts';
import { methodGuard, requestRefusal } from './transport.ts';
import { PACKAGE_VERSION } from './version.ts';

/** The operator console's page (docs/operator-console.md), bundled by the web kit (docs/web-kit.md). */
const CONSOLE_WEB = fileURLToPath(new URL('./console/web/', import.meta.url));

export interface CloudDeps {
  config: CloudConfig;
  store: CloudStore;
  /** Where structured logs go; stdout JSON lines by default. */
  sink?: LogSink;
  now?: () => number;
  /** Replace the JWT verifier (tests of the JWKS mode use their own). */
  verifyToken?: TokenVerifier;
  /** Override some HTTP limits (tests use short time-outs); HTTP_LIMITS otherwise. */
  limits?: Partial<HttpLimits>;
  /**
   * The workers of this `fleet serve` (docs/cloud-workers.md): this process's share of the service's
   * bounds (gates, caches, log volume) is 1/workers of each; the peers hear of its changes. Default: 1, none.
   */
  workers?: number;
  /** Which of them this process is, 1 to workers (GET /health says it). */
  worker?: number;
  peers?: Peers;
}

export interface Cloud {
  app: express.Express;
  /** The request listener to give to http.createServer: OTA fast path, then Express. */
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * For `Expect: 100-continue`: answers (and returns true) when the request is refused on its
   * headers alone, so that the client never sends the body: a backup or an image over its size limit.
   */
  refuseBeforeContinue: (req: IncomingMessage, res: ServerResponse) => boolean;
  ota: OtaService;
  releases: ReleaseService;
  /** OTA checks waiting to be written to the inventory; flush() writes them now (tests). */
  inventory: OtaCheckRecorder;
  images: HostedImages;
  limits: HttpLimits;
  levels: LogLevels;
  logs: LogRegistry;
  /** The admission gates' counters (docs/fleet-scale.md). */
  gates(): { store: AdmissionStats; upload: AdmissionStats };
  /** Loads the deployed log levels and starts refreshing them, and the inventory's flushes. */
  start(): Promise<void>;
  /** Stops both; the inventory writes what it holds. */
  stop(): Promise<void>;
}

/** A device's health reports (docs/device-health.md): the health function's, not the backups'. */
const DEVICE_HEALTH_PATH = /^\/devices\/[^/]+\/health\/?$/i;

/** Which cloud function a request belongs to, by its first path segment (a device's health reports, by the last). */
export function functionForPath(path: string): CloudFunction | undefined {
  if (path.startsWith('/ota/') || path.startsWith('/images/')) return 'svc-func-ota';
  if (DEVICE_HEALTH_PATH.test(path)) return 'svc-func-health';
  if (path.startsWith('/devices/')) return 'svc-func-backup';
  if (path === '/appconfig' || path.startsWith('/appconfig/')) return 'svc-func-appconfig';
  if (path === '/admin' || path.startsWith('/admin/') || path === '/console' || path.startsWith('/console/')) return 'svc-func-admin';
  if (path === '/health') return 'svc-func-health';
  return undefined;
}

export function createCloud(deps: CloudDeps): Cloud {
  const { config } = deps;
  const now = deps.now ?? Date.now;
  const workers = deps.workers ?? 1;
  const peers = deps.peers ?? NO_PEERS;
  const limits: HttpLimits = workerLimits({ ...HTTP_LIMITS, ...deps.limits }, workers);
  // A networked store's calls (PostgreSQL: its pool) go through a bounded gate (503 store_saturated
  // past it); the health check and the log-level refresh use the store directly, so they keep
  // answering under load. SQLite's calls are synchronous, and its writes that wait for another
  // worker's lock wait in the store's own line, bounded in time (cloud/store/sqlite-busy.ts): a gate in
  // front of them only turned a short wait for the lock into 503s (docs/cloud-workers.md).
  const storeLimits = {
    maxActive: limits.storeMaxActive,
    maxQueued: limits.storeMaxQueued,
    maxWaitMs: limits.storeMaxWaitMs,
    retryAfterSeconds: limits.retryAfterSeconds,
    retryAfterMaxSeconds: limits.retryAfterMaxSeconds,
  };
  const { store, gate: storeGate } = deps.store.kind === 'sqlite' ? { store: deps.store, gate: new Admission('store', storeLimits) } : guardStore(deps.store, storeLimits);
  const uploadGate = new Admission('upload', {
    maxActive: limits.uploadMaxActive,
    maxQueued: limits.uploadMaxQueued,
    maxWaitMs: limits.uploadMaxWaitMs,
    retryAfterSeconds: limits.retryAfterSeconds,
    retryAfterMaxSeconds: limits.retryAfterMaxSeconds,
  });
  const sink = deps.sink ?? (config.logFormat === 'pretty' ? prettySink() : jsonLineSink());
  const levels = new LogLevels(deps.store);
  const logs = new LogRegistry(levels, sink, now, workerShare(LOG_MAX_RECORDS_PER_SECOND, workers));
  const log = (fn: CloudFunction) => logs.logger(fn);
  const logFor = (req: Request): FunctionLogger | undefined => {
    const fn = functionForPath(req.path);
    return fn ? log(fn) : undefined;
  };

  const ota = new OtaService(store, log('svc-func-ota'), config.otaCacheTtlMs, now, workerShare(config.otaCacheBytes, workers), peers);
  const auth = new DeviceAuthenticator(store, config.signatureWindowSeconds, now);
  const verifyToken = deps.verifyToken ?? createTokenVerifier(config.jwt);
  // A bearer token, or the operator console's session cookie (with its CSRF defence): docs/operator-console.md.
  // Sessions live in the store, so a log-out on one worker or instance ends them on all.
  const sessions = new ConsoleSessions(store, { now, publicUrl: config.publicUrl, groupsClaim: config.jwt.groupsClaim, superuserGroup: config.jwt.superuserGroup });
  const superUser = superUserOrSession(verifyToken, sessions);
  const appconfig = new AppConfigService(store, levels, config.appconfigDeploySeconds, now, peers);
  const releases = new ReleaseService(store, ota, log('svc-func-admin'), now);
  const health = new HealthService(store, releases, log('svc-func-health'), now);
  const inventory = new OtaCheckRecorder(store, log('svc-func-ota'), now, (failed) => releases.pauseOverThreshold(failed));
  ota.onCheck = (seen) => inventory.record(seen);
  const images = new HostedImages(store, ota, workerShare(config.imageCacheBytes, workers));
  const startedAtMs = Date.now();

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // Per-request DEBUG line, for the function the request belongs to (only when DEBUG is on).
  app.use((req, res, next) => {
    const logger = logFor(req);
    if (logger?.enabled('DEBUG')) {
      const t0 = process.hrtime.bigint();
      res.on('finish', () => {
        logger.debug('request', {
          method: req.method,
          path: req.path,
          status: res.statusCode,
          duration_ms: Number(process.hrtime.bigint() - t0) / 1e6,
        });
      });
    }
    next();
  });

  // OPTIONS, TRACE, … : 405 with Allow on a route, 404 elsewhere; never Express's own OPTIONS answer.
  app.use(methodGuard());
  // The super-user check comes before the JSON body is read: an unauthenticated client never gets
  // 64 KB per connection buffered and parsed. inflate: false: a compressed JSON body is a 415, not
  // something to decompress.
  // Every change a super user makes is recorded with who made it (docs/operator-console.md).
  const jsonBody = express.json({ limit: JSON_BODY_LIMIT_BYTES, type: 'application/json', inflate: false });
  app.use(['/admin', '/appconfig'], superUser, auditTrail(store, log('svc-func-admin'), now), jsonBody);
  app.use('/console/session', auditTrail(store, log('svc-func-admin'), now), jsonBody);
  app.use(healthRoutes(deps.store, log('svc-func-health'), startedAtMs, PACKAGE_VERSION, { worker: deps.worker ?? 1, workers }));
  app.get('/openapi.json', (_req, res) => sendJson(res, 200, openApiDocument));
  app.use(otaRoutes(ota));
  app.use(imageRoutes(images, log('svc-func-ota')));
  // Room for every upload at work to give its body back (64 KB bodies), within 8 MiB.
  const bodies = new BodyPool(Math.min(8 * 1024 * 1024, limits.uploadMaxActive * 64 * 1024));
  const backupDeps = { store, auth, log: log('svc-func-backup'), now, bodyIdleTimeoutMs: limits.bodyIdleTimeoutMs, uploads: uploadGate, bodies };
  app.use(backupRoutes(backupDeps));
  const healthDeps = { health, auth, log: log('svc-func-health'), bodyIdleTimeoutMs: limits.bodyIdleTimeoutMs };
  app.use(deviceHealthRoutes(healthDeps));
  app.use(appconfigRoutes(appconfig, superUser, log('svc-func-appconfig')));
  app.use(
    adminRoutes({ store, releases, health, superUser, log: log('svc-func-admin'), now, config, bodyIdleTimeoutMs: limits.bodyIdleTimeoutMs, uploads: uploadGate }),
  );
  app.use(sessionRoutes(verifyToken, sessions));
  app.use(pageRoutes(CONSOLE_WEB, { page: '/console', assets: '/console/' }));
  app.use((req, _res, next) => next(new ApiError('route_not_found', { method: req.method, path: req.path.slice(0, 256) })));
  app.use(errorMiddleware(logFor));

  const fast = config.otaFastPath ? otaFastPath(ota, log('svc-func-ota')) : () => false;
  const fastPush = backupFastPath(backupPusher(backupDeps), log('svc-func-backup'));
  const fastReport = deviceFastPath('/health', healthReporter(healthDeps), log('svc-func-health'));
  // Whatever Express leaves unanswered (a target its router cannot parse, an error in the error
  // middleware itself) is answered here, as JSON, instead of by Express's HTML finalhandler.
  const finalHandler = (req: IncomingMessage, res: ServerResponse) => (err?: unknown) => {
    const fn = functionForPath((req.url ?? '').split('?', 1)[0]!);
    const ctx = { method: req.method, path: (req.url ?? '').split('?', 1)[0]!.slice(0, 256) };
    try {
      renderError(res, err ?? new ApiError('route_not_found', ctx), fn ? log(fn) : undefined, ctx);
    } catch {
      res.destroy();
    }
  };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const refused = requestRefusal(req, limits);
    if (refused) {
      renderError(res, refused, undefined, {}, { close: true });
      return;
    }
    try {
      if (fast(req, res)) return;
    } catch (err) {
      renderError(res, err, log('svc-func-ota'));
      return;
    }
    if (fastPush(req, res) || fastReport(req, res)) return;
    (app as unknown as (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void)(req, res, finalHandler(req, res));
  };

  const refuseBeforeContinue = (req: IncomingMessage, res: ServerResponse): boolean => {
    const refused = requestRefusal(req, limits);
    if (refused) {
      renderError(res, refused, undefined, {}, { close: true, bodyComing: false });
      return true;
    }
    const declared = Number(req.headers['content-length']);
    if (req.method === 'POST' && /^\/devices\/[^/]+\/backup(\?|$)/.test(req.url ?? '') && declared > MAX_BACKUP_BYTES) {
      renderError(res, new ApiError('backup_too_large', { limit_bytes: MAX_BACKUP_BYTES, content_length: declared }), log('svc-func-backup'), {}, { bodyComing: false });
      return true;
    }
    const tooLargeReport = req.method === 'POST' && DEVICE_HEALTH_PATH.test((req.url ?? '').split('?', 1)[0]!) ? healthReportTooLarge(declared) : undefined;
    if (tooLargeReport) {
      renderError(res, tooLargeReport, log('svc-func-health'), {}, { bodyComing: false });
      return true;
    }
    if (req.method === 'PUT' && /^\/admin\/firmware\/[^/]+\/[^/]+\/[^/]+\/[^/]+\/image(\?|$)/.test(req.url ?? '') && declared > MAX_IMAGE_BYTES) {
      renderError(res, new ApiError('image_too_large', { limit_bytes: MAX_IMAGE_BYTES, content_length: declared }), log('svc-func-admin'), {}, { bodyComing: false });
      return true;
    }
    return false;
  };

  return {
    app,
    listener,
    refuseBeforeContinue,
    ota,
    releases,
    inventory,
    images,
    limits,
    levels,
    logs,
    gates: () => ({ store: storeGate.stats(), upload: uploadGate.stats() }),
    async start() {
      await levels.refresh();
      levels.start(config.appconfigRefreshMs, (err) =>
        log('svc-func-appconfig').error('log level refresh failed', { error: err instanceof Error ? err.message : String(err) }),
      );
      inventory.start(config.inventoryFlushMs);
    },
    async stop() {
      levels.stop();
      await inventory.stop();
    },
  };
}
