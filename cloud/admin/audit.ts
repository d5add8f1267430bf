// The audit log (docs/operator-console.md): every request of a super user that changes something
// (admin API, appconfig, console log-in and log-out) is recorded with who made it, how (a bearer token
// or the console's session) and how it ended; GET /admin/audit reads it back, newest first. Requests
// that fail authentication are not recorded: nobody could then fill the log without a token.
import { Router, type Request, type RequestHandler } from 'express';
import type { SuperUser } from '../auth/jwt.ts';
import { route, sendJson } from '../http.ts';
import type { FunctionLogger } from '../logging.ts';
import { AuditQuery } from '../schema/api.ts';
import { parseTrack } from '../ota/validate.ts';
import { checked, checker } from '../schema/request.ts';
import { routePattern, ROUTES } from '../schema/routes.ts';
import type { CloudStore, ReleaseTrack } from '../store/types.ts';

/** Who made an admin request: the super user's subject (undefined before authentication). */
export function who(res: { locals: Record<string, unknown> }): string | undefined {
  return (res.locals.superUser as { subject?: string } | undefined)?.subject;
}

/** The release track a `/…/:class/:product_hex/:application` route names, checked. */
export function trackParams(req: Request): ReleaseTrack {
  return parseTrack(req.params.class as string, req.params.product_hex as string, req.params.application as string);
}

const OPERATIONS = ROUTES.map((r) => ({
  method: r.method.toUpperCase(),
  pattern: routePattern(r.path),
  operationId: r.operationId,
}));

/** The route table's operationId of a request (the audit log's action). */
export function operationOf(method: string, path: string): string | undefined {
  return OPERATIONS.find((o) => o.method === method && o.pattern.test(path))?.operationId;
}

export function auditTrail(store: CloudStore, log: FunctionLogger, now: () => number): RequestHandler {
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    const path = req.originalUrl.split('?', 1)[0]!;
    res.once('finish', () => {
      const user = res.locals.superUser as (SuperUser & { via?: 'api' | 'console' }) | undefined;
      if (!user) return;
      store
        .appendAudit({
          at: new Date(now()).toISOString(),
          actor: (user.subject ?? '(no subject)').slice(0, 256),
          via: user.via ?? 'api',
          action: operationOf(req.method, path) ?? `${req.method} ${path}`.slice(0, 128),
          method: req.method,
          path: req.originalUrl.slice(0, 512),
          status: res.statusCode,
          details: (res.locals.audit as Record<string, unknown> | undefined) ?? null,
        })
        .catch((err: unknown) => log.error('audit log write failed', { error: err instanceof Error ? err.message : String(err), path }));
    });
    next();
  };
}

const checkQuery = checker(AuditQuery);

export function auditRoutes(store: CloudStore): Router {
  const router = Router();
  router.get(
    '/admin/audit',
    route(async (req, res) => {
      const q = checked(checkQuery, { ...req.query }, 'invalid_query');
      const limit = Math.min(Math.max(Number(q.limit ?? 100), 1), 1000);
      const entries = await store.listAudit({
        limit,
        ...(q.before !== undefined ? { beforeId: Number(q.before) } : {}),
        ...(q.actor !== undefined ? { actor: q.actor } : {}),
        ...(q.action !== undefined ? { action: q.action } : {}),
        // As the log writes `at`: ISO 8601 in UTC, so that text order is time order.
        ...(q.since !== undefined ? { since: new Date(q.since).toISOString() } : {}),
        ...(q.until !== undefined ? { until: new Date(q.until).toISOString() } : {}),
      });
      sendJson(res, 200, { entries, next_before: entries.length === limit ? entries.at(-1)!.id : null });
    }),
  );
  return router;
}
