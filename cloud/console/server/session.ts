// The operator console's session (docs/operator-console.md). The console logs in with the same
// super-user JWT as the admin API: POST /console/session checks it with the same verifier, then opens
// a session of its own in the cloud's store (so log-out ends it on every worker and instance) and
// gives the browser only an opaque random id for it, in an HttpOnly, SameSite=Strict cookie: the JWT
// is never in a cookie, in localStorage or in a URL. A second HttpOnly cookie holds the session's
// random CSRF token, which the answer also gives the page; the page keeps it in memory and sends it as
// X-CSRF-Token. A request authenticated by the cookie that changes something must carry that header
// (a cross-site form cannot), the token must be this session's, and the request must come from the
// console's own origin (Origin, Sec-Fetch-Site); it is then checked by the admin API exactly as a
// bearer request is.
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { isSecret, newSecret, parseCookies, sameSecret, secretDigest, setCookie } from '../../../web-common/server/cookies.ts';
import { foreignSender } from '../../../web-common/server/request-guard.ts';
import type { SuperUser, TokenVerifier } from '../../auth/jwt.ts';
import { ApiError } from '../../errors.ts';
import { route, sendJson } from '../../http.ts';
import { requireJsonBody } from '../../json-body.ts';
import { ConsoleLogin } from '../../schema/api.ts';
import { checked, checker } from '../../schema/request.ts';
import type { CloudStore, ConsoleSessionRecord } from '../../store/types.ts';

export const CSRF_HEADER = 'x-csrf-token';
/** A session never outlives its token, nor this. */
export const MAX_SESSION_SECONDS = 8 * 3600;
const SAFE = new Set(['GET', 'HEAD']);

/**
 * The console's two cookies. Over https both names carry the `__Host-` prefix: a browser then accepts
 * them only with Secure, Path=/ and no Domain, so no other host name (a sibling subdomain, a plain-http
 * page) can set or shadow them. Cookies are not scoped by port: every service on the same host name
 * receives them, which is why the session cookie holds only an opaque id that means something to this
 * cloud's store alone, never a token another service would accept.
 */
export interface ConsoleCookieNames {
  session: string;
  csrf: string;
}

const PLAIN_COOKIE_NAMES: ConsoleCookieNames = { session: 'fleet_session', csrf: 'fleet_csrf' };
const HTTPS_COOKIE_NAMES: ConsoleCookieNames = { session: '__Host-fleet_session', csrf: '__Host-fleet_csrf' };

export type SessionUser = SuperUser & { via: 'api' | 'console' };

export interface ConsoleSessionOptions {
  now: () => number;
  /** PUBLIC_URL: when it is https, browsers reach the console over https (a TLS proxy in front). */
  publicUrl: string | undefined;
  /** The token claim that lists the groups, and the super users' group (JWT_GROUPS_CLAIM, JWT_SUPERUSER_GROUP). */
  groupsClaim: string;
  superuserGroup: string;
}

/**
 * The console's sessions, kept in the store: opened at log-in, looked up on every request, deleted at
 * log-out. The store holds only SHA-256 hashes of the id and of the CSRF token; the id is never logged.
 */
export class ConsoleSessions {
  constructor(
    private readonly store: CloudStore,
    private readonly o: ConsoleSessionOptions,
  ) {}

  /** Whether the browser reached the console over https: a TLS connection, or an https PUBLIC_URL. */
  https(req: Request): boolean {
    return req.secure || (this.o.publicUrl?.startsWith('https://') ?? false);
  }

  /** The cookie names for this request's scheme (`__Host-` over https): the only ones set and read. */
  names(req: Request): ConsoleCookieNames {
    return this.https(req) ? HTTPS_COOKIE_NAMES : PLAIN_COOKIE_NAMES;
  }

  /** The session id and the CSRF token this request's cookies hold, under its scheme's names. */
  sent(req: Request): { id: string | undefined; csrf: string | undefined } {
    const names = this.names(req);
    const cookies = parseCookies(req.headers.cookie);
    return { id: cookies.get(names.session), csrf: cookies.get(names.csrf) };
  }

  /** Sets both cookies for `maxAgeSeconds` (0: clears them). */
  setCookies(req: Request, res: Response, id: string, csrf: string, maxAgeSeconds: number): void {
    const names = this.names(req);
    const https = this.https(req);
    res.setHeader('set-cookie', [setCookie(names.session, id, { maxAgeSeconds, https }), setCookie(names.csrf, csrf, { maxAgeSeconds, https })]);
  }

  /**
   * A new session for a verified super user, until the token's `exp` and at most MAX_SESSION_SECONDS;
   * `maxAgeSeconds` is its lifetime from the same instant (whole seconds, at least 1), for the cookies.
   */
  async open(user: SuperUser): Promise<{ id: string; csrf: string; session: ConsoleSessionRecord; maxAgeSeconds: number }> {
    const now = this.o.now();
    const exp = typeof user.claims.exp === 'number' ? user.claims.exp * 1000 : Infinity;
    const groups = user.claims[this.o.groupsClaim];
    const id = newSecret();
    const csrf = newSecret();
    const session: ConsoleSessionRecord = {
      idHash: secretDigest(id),
      subject: user.subject ?? null,
      groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === 'string') : [],
      csrfHash: secretDigest(csrf),
      createdAt: new Date(now).toISOString(),
      expiresAtMs: Math.min(exp, now + MAX_SESSION_SECONDS * 1000),
    };
    // Only where this cloud's clock differs from the verifier's (which refused an expired token already).
    if (session.expiresAtMs <= now) throw new ApiError('invalid_token', undefined, 'The token expires before a console session could start');
    await this.store.createConsoleSession(session, now);
    return { id, csrf, session, maxAgeSeconds: Math.max(1, Math.floor((session.expiresAtMs - now) / 1000)) };
  }

  /** The live session a cookie value names; null when it names none (unknown, ended, expired, not an id). */
  async lookup(id: string): Promise<ConsoleSessionRecord | null> {
    if (!isSecret(id)) return null;
    return this.store.getConsoleSession(secretDigest(id), this.o.now());
  }

  /** As lookup, refusing with 401 session_expired. */
  async find(id: string): Promise<ConsoleSessionRecord> {
    const session = await this.lookup(id);
    if (!session) throw new ApiError('session_expired');
    return session;
  }

  /** Deletes the session a cookie value names, live or expired: from now on every instance refuses it. */
  async end(id: string): Promise<void> {
    if (isSecret(id)) await this.store.deleteConsoleSession(secretDigest(id));
  }

  /** Who a session is (the audit log's actor), as a verified token would say it. */
  userOf(s: ConsoleSessionRecord): SessionUser {
    const claims = { [this.o.groupsClaim]: s.groups, exp: Math.floor(s.expiresAtMs / 1000), ...(s.subject === null ? {} : { sub: s.subject }) };
    return { subject: s.subject ?? undefined, claims, via: 'console' };
  }

  /** The super user of a session, authorized as a token is: by the super users' group among its groups. */
  authorize(s: ConsoleSessionRecord): SessionUser {
    if (!s.groups.includes(this.o.superuserGroup)) throw new ApiError('not_superuser');
    return this.userOf(s);
  }
}

/** For a cookie-authenticated request that changes something: the CSRF token, and a same-origin sender. */
function checkCsrf(req: Request, expected: string | undefined): void {
  const sent = req.headers[CSRF_HEADER];
  if (!expected || typeof sent !== 'string' || !sameSecret(sent, expected)) {
    throw new ApiError('csrf_check_failed', { header: CSRF_HEADER });
  }
  const foreign = foreignSender(req);
  if (foreign?.header === 'origin') throw foreignOrigin('request', foreign.value);
  if (foreign) throw new ApiError('csrf_check_failed', { sec_fetch_site: foreign.value.slice(0, 32) }, `A console request must be same-origin (Sec-Fetch-Site: ${foreign.value.slice(0, 32)})`);
}

function foreignOrigin(what: 'request' | 'log-in', origin: string): ApiError {
  return new ApiError('csrf_check_failed', { origin: origin.slice(0, 200) }, `A console ${what} must come from the console's own origin, not ${origin.slice(0, 200)}`);
}

/** After checkCsrf: the token sent is the one this session was opened with. */
function checkSessionCsrf(req: Request, session: ConsoleSessionRecord): void {
  if (!sameSecret(secretDigest(String(req.headers[CSRF_HEADER])), session.csrfHash)) {
    throw new ApiError('csrf_check_failed', { header: CSRF_HEADER }, "The CSRF token is not this console session's");
  }
}

/**
 * The super-user authorizer of /admin and /appconfig, accepting the console's session cookie besides
 * `Authorization: Bearer`: the bearer header wins when both are sent. A bearer token is verified; a
 * cookie names a session that must be in the store and live. The user is marked with how it came (the
 * audit log's `via`). A JWT in the cookie is not a session id: refused like any unknown one.
 */
export function superUserOrSession(verify: TokenVerifier, sessions: ConsoleSessions): RequestHandler {
  return (req, res, next) => {
    if (res.locals.superUser) return next();
    const run = async (): Promise<SessionUser> => {
      const sent = sessions.sent(req);
      const id = req.headers.authorization === undefined ? sent.id : undefined;
      if (id === undefined) return { ...(await verify(req.headers.authorization)), via: 'api' };
      const changes = !SAFE.has(req.method);
      if (changes) checkCsrf(req, sent.csrf);
      const session = await sessions.find(id);
      if (changes) checkSessionCsrf(req, session);
      return sessions.authorize(session);
    };
    run().then((user) => {
      res.locals.superUser = user;
      next();
    }, next);
  };
}

const checkLogin = checker(ConsoleLogin);

export function sessionRoutes(verify: TokenVerifier, sessions: ConsoleSessions): Router {
  const router = Router();
  const answer = (res: Response, session: ConsoleSessionRecord, csrf: string, status: number) => {
    res.setHeader('cache-control', 'no-store');
    sendJson(res, status, { subject: session.subject, expires_at: new Date(session.expiresAtMs).toISOString(), csrf_token: csrf });
  };

  router.post(
    '/console/session',
    route(async (req, res) => {
      // A log-in from another origin is refused too (nobody logs a browser into someone else's session).
      const foreign = foreignSender(req);
      if (foreign?.header === 'origin') throw foreignOrigin('log-in', foreign.value);
      const { token } = checked(checkLogin, requireJsonBody(req), 'invalid_body');
      const user = await verify(`Bearer ${token}`);
      const { id, csrf, session, maxAgeSeconds } = await sessions.open(user);
      res.locals.superUser = { ...user, via: 'console' } satisfies SessionUser;
      // The browser's earlier session, if it sent one, is replaced: ended, not left alive unreachable.
      const previous = sessions.sent(req).id;
      if (previous !== undefined) await sessions.end(previous);
      sessions.setCookies(req, res, id, csrf, maxAgeSeconds);
      answer(res, session, csrf, 201);
    }),
  );

  router.get(
    '/console/session',
    route(async (req, res) => {
      const { id, csrf } = sessions.sent(req);
      if (id === undefined || csrf === undefined) throw new ApiError('missing_token', undefined, 'No console session: log in');
      const session = await sessions.find(id);
      if (!sameSecret(secretDigest(csrf), session.csrfHash)) throw new ApiError('session_expired', undefined, "The CSRF cookie is not this console session's: log in again");
      sessions.authorize(session);
      answer(res, session, csrf, 200);
    }),
  );

  router.delete(
    '/console/session',
    route(async (req, res) => {
      const { id, csrf } = sessions.sent(req);
      // A log-out is a change too: only the console itself may ask for it.
      checkCsrf(req, csrf);
      if (id !== undefined) {
        const session = await sessions.lookup(id);
        if (session) {
          checkSessionCsrf(req, session);
          res.locals.superUser = sessions.userOf(session);
        }
        // Deleted from the store (an expired one too): every worker and instance refuses it from now on.
        await sessions.end(id);
      }
      sessions.setCookies(req, res, '', '', 0);
      res.status(204).end();
    }),
  );
  return router;
}
