// The operator console's session (docs/operator-console.md). The console logs in with the same
// super-user JWT as the admin API: POST /console/session checks it with the same verifier and puts it
// in an HttpOnly, SameSite=Strict cookie (never in localStorage or a URL), with a second HttpOnly
// cookie holding a random CSRF token that the answer also gives the page, which keeps it in memory
// and sends it as X-CSRF-Token. A request authenticated by the cookie that changes something must
// carry that header (a cross-site form cannot), come from the console's own origin (Origin,
// Sec-Fetch-Site), and is then checked by the admin API exactly as a bearer request is.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { SuperUser, TokenVerifier } from '../auth/jwt.ts';
import { ApiError } from '../errors.ts';
import { route, sendJson } from '../http.ts';
import { requireJsonBody } from '../json-body.ts';
import { ConsoleLogin } from '../schema/api.ts';
import { checked, checker } from '../schema/request.ts';

export const SESSION_COOKIE = 'fleet_session';
export const CSRF_COOKIE = 'fleet_csrf';
export const CSRF_HEADER = 'x-csrf-token';
/** A session never outlives its token, nor this. */
export const MAX_SESSION_SECONDS = 8 * 3600;
const SAFE = new Set(['GET', 'HEAD']);

export type SessionUser = SuperUser & { via: 'api' | 'console' };

/** `name=value` pairs of a Cookie header (the last one wins, as browsers send the most specific first). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 1) continue;
    const name = part.slice(0, eq).trim();
    if (!out.has(name)) out.set(name, part.slice(eq + 1).trim());
  }
  return out;
}

function sameBytes(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The origin the console is served from, as this request reached it. */
function ownOrigin(req: Request): string {
  return `${req.protocol}://${req.headers.host ?? ''}`;
}

/** For a cookie-authenticated request that changes something: the CSRF token, and a same-origin sender. */
function checkCsrf(req: Request, cookies: Map<string, string>): void {
  const expected = cookies.get(CSRF_COOKIE);
  const sent = req.headers[CSRF_HEADER];
  if (!expected || typeof sent !== 'string' || !sameBytes(sent, expected)) {
    throw new ApiError('csrf_check_failed', { header: CSRF_HEADER });
  }
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== ownOrigin(req)) throw new ApiError('csrf_check_failed', { origin: origin.slice(0, 200) }, `A console request must come from the console's own origin, not ${origin.slice(0, 200)}`);
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') throw new ApiError('csrf_check_failed', { sec_fetch_site: String(site).slice(0, 32) }, `A console request must be same-origin (Sec-Fetch-Site: ${String(site).slice(0, 32)})`);
}

/**
 * The super-user authorizer of /admin and /appconfig, accepting the console's session cookie besides
 * `Authorization: Bearer`: the bearer header wins when both are sent. The token is verified the same
 * way either way; the user is marked with how it came (the audit log's `via`).
 */
export function superUserOrSession(verify: TokenVerifier): RequestHandler {
  return (req, res, next) => {
    if (res.locals.superUser) return next();
    const cookies = parseCookies(req.headers.cookie);
    const session = req.headers.authorization === undefined ? cookies.get(SESSION_COOKIE) : undefined;
    const run = async (): Promise<SessionUser> => {
      if (session === undefined) return { ...(await verify(req.headers.authorization)), via: 'api' };
      if (!SAFE.has(req.method)) checkCsrf(req, cookies);
      return { ...(await verify(`Bearer ${session}`)), via: 'console' };
    };
    run().then((user) => {
      res.locals.superUser = user;
      next();
    }, next);
  };
}

function cookie(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

const checkLogin = checker(ConsoleLogin);

export function sessionRoutes(verify: TokenVerifier, o: { now: () => number; publicUrl: string | undefined }): Router {
  const router = Router();
  const secure = (req: Request) => req.secure || (o.publicUrl?.startsWith('https://') ?? false);
  const answer = (res: Response, user: SuperUser, csrf: string, status: number) => {
    const exp = typeof user.claims.exp === 'number' ? user.claims.exp * 1000 : o.now() + MAX_SESSION_SECONDS * 1000;
    sendJson(res, status, { subject: user.subject ?? null, expires_at: new Date(Math.min(exp, o.now() + MAX_SESSION_SECONDS * 1000)).toISOString(), csrf_token: csrf });
  };

  router.post(
    '/console/session',
    route(async (req, res) => {
      // A log-in from another origin is refused too (nobody logs a browser into someone else's session).
      const origin = req.headers.origin;
      if (origin !== undefined && origin !== ownOrigin(req)) throw new ApiError('csrf_check_failed', { origin: origin.slice(0, 200) }, `A console log-in must come from the console's own origin, not ${origin.slice(0, 200)}`);
      const { token } = checked(checkLogin, requireJsonBody(req), 'invalid_body');
      const user = await verify(`Bearer ${token}`);
      res.locals.superUser = { ...user, via: 'console' } satisfies SessionUser;
      const exp = typeof user.claims.exp === 'number' ? user.claims.exp * 1000 : Infinity;
      const maxAge = Math.max(1, Math.floor(Math.min(exp - o.now(), MAX_SESSION_SECONDS * 1000) / 1000));
      const csrf = randomBytes(32).toString('base64url');
      res.setHeader('set-cookie', [cookie(SESSION_COOKIE, token, maxAge, secure(req)), cookie(CSRF_COOKIE, csrf, maxAge, secure(req))]);
      res.setHeader('cache-control', 'no-store');
      answer(res, user, csrf, 201);
    }),
  );

  router.get(
    '/console/session',
    route(async (req, res) => {
      const cookies = parseCookies(req.headers.cookie);
      const session = cookies.get(SESSION_COOKIE);
      const csrf = cookies.get(CSRF_COOKIE);
      if (session === undefined || csrf === undefined) throw new ApiError('missing_token', undefined, 'No console session: log in');
      const user = await verify(`Bearer ${session}`);
      res.setHeader('cache-control', 'no-store');
      answer(res, user, csrf, 200);
    }),
  );

  router.delete(
    '/console/session',
    route(async (req, res) => {
      const cookies = parseCookies(req.headers.cookie);
      // A log-out is a change too: only the console itself may ask for it.
      checkCsrf(req, cookies);
      const session = cookies.get(SESSION_COOKIE);
      if (session !== undefined) {
        try {
          res.locals.superUser = { ...(await verify(`Bearer ${session}`)), via: 'console' } satisfies SessionUser;
        } catch {
          /* an expired session is ended all the same */
        }
      }
      res.setHeader('set-cookie', [cookie(SESSION_COOKIE, '', 0, secure(req)), cookie(CSRF_COOKIE, '', 0, secure(req))]);
      res.status(204).end();
    }),
  );
  return router;
}
