// The browser sessions of the configurator: which controllers this browser has logged in to, and
// their visual-tokens (docs/firmware-visual-token.md). Held in this process's memory only: never in
// the site file, a log or a URL, never sent to the page (the session cookie is HttpOnly). A session
// is found by the SHA-256 of its cookie, so looking one up reveals nothing about other cookies'
// values through timing; a restart of the configurator logs every browser out.
//
// Only a log-in to a controller from the page opens a session (handlers.ts, behind the request guard:
// another site cannot send it), and a session lives while it holds a token. A request without the
// cookie opens nothing, so no other page can fill the table; when log-ins fill it, the next
// browser's log-in is refused (too_many_sessions) and no live session is pushed out
// (docs/configurator-security.md).
import { isSecret, newSecret, parseCookies, secretDigest, setCookie } from '../../web-common/server/cookies.ts';
import { ConfiguratorError } from './errors.ts';

/**
 * Cookies are per host, not per port: the cookie's name carries the port, so that two configurators
 * on one machine (two sites) do not overwrite each other's session.
 */
export const sessionCookieName = (port: number) => `fleet_configurator_${port}`;

export interface Session {
  /** Controller id -> visual-token. */
  readonly tokens: Map<number, string>;
  lastSeenMs: number;
}

export interface SessionLimits {
  /** Sessions kept at once; a log-in that would open one more is refused. */
  maxSessions: number;
  /** A session unused this long is forgotten. */
  idleMs: number;
}

export const SESSION_LIMITS: SessionLimits = { maxSessions: 32, idleMs: 12 * 3_600_000 };

export class Sessions {
  private readonly byDigest = new Map<string, Session>();

  /** Set once the server listens (the cookie's name carries its port). */
  cookieName = sessionCookieName(0);

  constructor(
    private readonly limits: SessionLimits = SESSION_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The live session a request's cookie names, if any; a request never opens one. */
  find(cookieHeader: string | undefined): Session | undefined {
    const now = this.now();
    this.expire(now);
    const value = parseCookies(cookieHeader).get(this.cookieName);
    const known = value !== undefined && isSecret(value) ? this.byDigest.get(secretDigest(value)) : undefined;
    if (known) known.lastSeenMs = now;
    return known;
  }

  /** Throws too_many_sessions when a new session could not be opened now (asked before a log-in). */
  checkRoom(): void {
    this.expire(this.now());
    if (this.byDigest.size >= this.limits.maxSessions) {
      throw new ConfiguratorError(
        'too_many_sessions',
        `This configurator already keeps the log-ins of ${this.limits.maxSessions} browsers, the most it keeps: log out of the controllers in a browser no longer used (or restart the configurator), then log in again`,
        { max_sessions: this.limits.maxSessions },
      );
    }
  }

  /**
   * Keeps a controller's token in the request's session; without a live one (first log-in, or it
   * ended meanwhile) opens one, or throws too_many_sessions. Returns the Set-Cookie of a new session.
   */
  keepToken(session: Session | undefined, controllerId: number, token: string): string | undefined {
    if (session && [...this.byDigest.values()].includes(session)) {
      session.tokens.set(controllerId, token);
      return undefined;
    }
    this.checkRoom();
    const fresh = newSecret();
    this.byDigest.set(secretDigest(fresh), { tokens: new Map([[controllerId, token]]), lastSeenMs: this.now() });
    return setCookie(this.cookieName, fresh);
  }

  /** Forgets a session's token for a controller; a session left with none ends (the Set-Cookie that clears it). */
  forgetToken(session: Session | undefined, controllerId: number): string | undefined {
    if (!session) return undefined;
    session.tokens.delete(controllerId);
    if (session.tokens.size > 0) return undefined;
    this.expire(this.now());
    return setCookie(this.cookieName, '', { maxAgeSeconds: 0 });
  }

  /** Forgets every token for a controller (removed from the site, or moved to another address). */
  forgetController(id: number): void {
    for (const s of this.byDigest.values()) s.tokens.delete(id);
    this.expire(this.now());
  }

  get size(): number {
    return this.byDigest.size;
  }

  /** Drops the sessions idle too long and those that hold no token any more. */
  private expire(now: number): void {
    for (const [k, s] of this.byDigest) if (s.tokens.size === 0 || now - s.lastSeenMs > this.limits.idleMs) this.byDigest.delete(k);
  }
}
