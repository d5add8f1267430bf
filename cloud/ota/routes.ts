// GET /ota/{class}/{product_hex}/{application}: the Express route, and a fast path that answers the
// same check straight from the node:http listener. The fleet polls this route more than any other,
// and Express 5 costs about five times a bare handler per request here (docs/ota-fast-path.md).
import { Router, type Request } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderError, route, sendBytes } from '../http.ts';
import type { FunctionLogger } from '../logging.ts';
import type { OtaService } from './service.ts';

export const OTA_ROUTE = '/ota/:class/:product_hex/:application';

export function otaRoutes(ota: OtaService): Router {
  const router = Router();
  router.get(
    OTA_ROUTE,
    route(async (req: Request, res) => {
      const cv = req.query.current_version as string | string[] | undefined;
      const answer = await ota.check(req.params.class as string, req.params.product_hex as string, req.params.application as string, cv);
      sendBytes(res, answer.status, answer.body);
    }),
  );
  return router;
}

/**
 * Handles `GET /ota/a/b/c[?query]` and returns true; anything else (other methods, other shapes,
 * undecodable segments) returns false and goes to Express, which answers as it always would.
 */
export function otaFastPath(ota: OtaService, log: FunctionLogger): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined || !url.startsWith('/ota/')) return false;
    const cached = ota.cachedForUrl(url);
    if (cached) {
      sendBytes(res, cached.status, cached.body);
      return true;
    }
    const q = url.indexOf('?');
    const segments = (q < 0 ? url : url.slice(0, q)).slice(5).split('/');
    if (segments.length !== 3) return false;
    let cls: string, productHex: string, application: string;
    try {
      [cls, productHex, application] = segments.map((s) => decodeURIComponent(s)) as [string, string, string];
    } catch {
      return false;
    }
    if (cls === '' || productHex === '' || application === '') return false;
    let currentVersion: string | string[] | undefined;
    if (q >= 0) {
      const all = new URLSearchParams(url.slice(q + 1)).getAll('current_version');
      currentVersion = all.length === 0 ? undefined : all.length === 1 ? all[0] : all;
    }
    ota.checkUrl(url, cls, productHex, application, currentVersion).then(
      (answer) => sendBytes(res, answer.status, answer.body),
      (err: unknown) => renderError(res, err, log, { method: 'GET', path: url.slice(0, q < 0 ? undefined : q) }),
    );
    return true;
  };
}
