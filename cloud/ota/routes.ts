// GET /ota/{class}/{product_hex}/{application}: the Express route, and a fast path that answers the
// same check straight from the node:http listener. The fleet polls this route more than any other,
// and Express 5 costs about five times a bare handler per request here (docs/ota-fast-path.md).
import { Router, type Request } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderError, route, sendBytes } from '../http.ts';
import type { FunctionLogger } from '../logging.ts';
import type { OtaService } from './service.ts';

export const OTA_ROUTE = '/ota/:class/:product_hex/:application';
/** Who is asking (docs/device-inventory.md): optional, unauthenticated, as the check itself. */
export const DEVICE_UUID_HEADER = 'x-device-uuid';

/** The X-Device-UUID of a request, from rawHeaders (the fast path never builds req.headers); the first one. */
export function deviceUuidOf(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === DEVICE_UUID_HEADER) return raw[i + 1];
  }
  return undefined;
}

export function otaRoutes(ota: OtaService): Router {
  const router = Router();
  router.get(
    OTA_ROUTE,
    route(async (req: Request, res) => {
      const cv = req.query.current_version as string | string[] | undefined;
      const uuid = req.headers[DEVICE_UUID_HEADER];
      const answer = await ota.check(req.params.class as string, req.params.product_hex as string, req.params.application as string, cv, typeof uuid === 'string' ? uuid : undefined);
      sendBytes(res, answer.status, answer.body);
    }),
  );
  return router;
}

export interface OtaTarget {
  cls: string;
  productHex: string;
  application: string;
  /** The raw current_version value(s) of the query; other parameters are ignored. */
  currentVersion: string | string[] | undefined;
}

/**
 * `/ota/a/b/c[?query]` split into its decoded segments and current_version; undefined for any other
 * shape or an undecodable segment (Express then answers, as it always would).
 */
export function parseOtaTarget(url: string): OtaTarget | undefined {
  const q = url.indexOf('?');
  const segments = (q < 0 ? url : url.slice(0, q)).slice(5).split('/');
  if (segments.length !== 3) return undefined;
  let decoded: string[];
  try {
    decoded = segments.map((s) => (s.includes('%') ? decodeURIComponent(s) : s));
  } catch {
    return undefined;
  }
  const [cls, productHex, application] = decoded as [string, string, string];
  if (cls === '' || productHex === '' || application === '') return undefined;
  return { cls, productHex, application, currentVersion: q < 0 ? undefined : currentVersionOf(url.slice(q + 1)) };
}

/** The current_version parameter(s) of a query string, decoded as URLSearchParams does. */
function currentVersionOf(query: string): string | string[] | undefined {
  let all: string[];
  if (query.includes('%') || query.includes('+')) {
    all = new URLSearchParams(query).getAll('current_version');
  } else {
    // The common case (`current_version=2026.01.01`), without building a URLSearchParams.
    all = [];
    for (const pair of query.split('&')) {
      const eq = pair.indexOf('=');
      if ((eq < 0 ? pair : pair.slice(0, eq)) === 'current_version') all.push(eq < 0 ? '' : pair.slice(eq + 1));
    }
  }
  return all.length === 0 ? undefined : all.length === 1 ? all[0] : all;
}

/**
 * Handles `GET /ota/a/b/c[?query]` and returns true; anything else (other methods, other shapes,
 * undecodable segments) returns false and goes to Express, which answers as it always would. A
 * repeated check is answered synchronously from the answer cache.
 */
export function otaFastPath(ota: OtaService, log: FunctionLogger): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined || !url.startsWith('/ota/')) return false;
    // What devices send is the canonical target: one lookup answers it.
    const uuid = deviceUuidOf(req);
    const canonical = ota.cachedForCanonicalTarget(url, uuid);
    if (canonical) {
      sendBytes(res, canonical.status, canonical.body);
      return true;
    }
    const target = parseOtaTarget(url);
    if (!target) return false;
    const { cls, productHex, application, currentVersion } = target;
    const cached = ota.cachedAnswer(cls, productHex, application, currentVersion, uuid);
    if (cached) {
      sendBytes(res, cached.status, cached.body);
      return true;
    }
    ota.check(cls, productHex, application, currentVersion, uuid).then(
      (answer) => sendBytes(res, answer.status, answer.body),
      (err: unknown) => renderError(res, err, log, { method: 'GET', path: url.split('?', 1)[0]!.slice(0, 256) }),
    );
    return true;
  };
}
