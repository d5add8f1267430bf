// GET /health (spec 4.1): no authorizer, always 200. The body also says whether the store answers, so
// an operator sees a sick database without the health check itself failing.
import { Router } from 'express';
import { route, sendJson } from './http.ts';
import type { FunctionLogger } from './logging.ts';
import type { CloudStore } from './store/types.ts';

export function healthRoutes(store: CloudStore, log: FunctionLogger, startedAtMs: number, version: string, process: { worker: number; workers: number }): Router {
  const router = Router();
  router.get(
    '/health',
    route(async (_req, res) => {
      let storeState: 'ok' | 'failing' = 'ok';
      try {
        await store.ping();
      } catch (err) {
        storeState = 'failing';
        log.error('store ping failed', { error: err instanceof Error ? err.message : String(err) });
      }
      log.debug('health check', { store: storeState });
      sendJson(res, 200, {
        status: 'ok',
        version,
        uptime_seconds: Math.round((Date.now() - startedAtMs) / 1000),
        store: { kind: store.kind, state: storeState },
        worker: process.worker,
        workers: process.workers,
      });
    }),
  );
  return router;
}
