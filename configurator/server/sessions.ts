// The browser sessions of the configurator: which controllers this browser has logged in to, and
// their visual-tokens (docs/firmware-visual-token.md). Held in this process's memory only: never in
// the site file, a log or a URL, never sent to the page (the session cookie is HttpOnly). A session
// is found by the SHA-256 of its cookie, so looking one up reveals nothing about other cookies'
// values through timing; a restart of the configurator logs every browser out.
import { createHash, randomBytes } from 'node:crypto';

/**
 * Cookies are per host, not per port: the cookie's name carries the port, so that two configurators
 * on one machine (two sites) do not overwrite each other's session.
 */
export const sessionCookieName = (port: number) => `fleet_configurator_${port}`;
const COOKIE_VALUE = /^[0-9a-f]{64}$/;

export interface Session {
  /** Controller id -> visual-token. */
  readonly tokens: Map<number, string>;
  lastSeenMs: number;
}

export interface SessionLimits {
  /** Sessions kept at once; the least recently seen goes first. */
  maxSessions: number;
  /** A session unused this long is forgotten. */
  idleMs: number;
}

export const SESSION_LIMITS: SessionLimits = { maxSessions: 32, idleMs: 12 * 3_600_000 };

const digest = (value: string) => createHash('sha256').update(value).digest('hex');

export class Sessions {
  private readonly byDigest = new Map<string, Session>();

  /** Set once the server listens (the cookie's name carries its port). */
  cookieName = sessionCookieName(0);

  constructor(
    private readonly limits: SessionLimits = SESSION_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The session a request's cookies name, or a new one with the Set-Cookie header that names it. */
  resolve(cookieHeader: string | undefined): { session: Session; setCookie?: string } {
    const now = this.now();
    this.expire(now);
    const value = cookieValue(cookieHeader, this.cookieName);
    const known = value ? this.byDigest.get(digest(value)) : undefined;
    if (known) {
      known.lastSeenMs = now;
      return { session: known };
    }
    while (this.byDigest.size >= this.limits.maxSessions) this.byDigest.delete(this.leastRecent()!);
    const fresh = randomBytes(32).toString('hex');
    const session: Session = { tokens: new Map(), lastSeenMs: now };
    this.byDigest.set(digest(fresh), session);
    return { session, setCookie: `${this.cookieName}=${fresh}; HttpOnly; SameSite=Strict; Path=/` };
  }

  /** Forgets every token for a controller (it was removed from the site). */
  forgetController(id: number): void {
    for (const s of this.byDigest.values()) s.tokens.delete(id);
  }

  get size(): number {
    return this.byDigest.size;
  }

  private expire(now: number): void {
    for (const [k, s] of this.byDigest) if (now - s.lastSeenMs > this.limits.idleMs) this.byDigest.delete(k);
  }

  private leastRecent(): string | undefined {
    let oldest: [string, Session] | undefined;
    for (const e of this.byDigest) if (!oldest || e[1].lastSeenMs < oldest[1].lastSeenMs) oldest = e;
    return oldest?.[0];
  }
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, v] = part.trim().split('=', 2);
    if (k === name && v !== undefined && COOKIE_VALUE.test(v)) return v;
  }
  return undefined;
}
