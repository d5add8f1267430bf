// The operator console's two cookies (docs/operator-console.md): their names, their attributes, and
// reading them back. Over https both names carry the `__Host-` prefix: a browser then accepts them
// only with Secure, Path=/ and no Domain, so no other host name (a sibling subdomain, a plain-http
// page) can set or shadow them. Cookies are not scoped by port: every service on the same host name
// receives them, which is why the session cookie holds only an opaque id that means something to this
// cloud's store alone, never a token another service would accept.

export interface ConsoleCookieNames {
  session: string;
  csrf: string;
}

export const PLAIN_COOKIE_NAMES: ConsoleCookieNames = { session: 'fleet_session', csrf: 'fleet_csrf' };
export const HTTPS_COOKIE_NAMES: ConsoleCookieNames = { session: '__Host-fleet_session', csrf: '__Host-fleet_csrf' };

/** The names for a request's scheme: set with them, and read only them back. */
export function cookieNames(https: boolean): ConsoleCookieNames {
  return https ? HTTPS_COOKIE_NAMES : PLAIN_COOKIE_NAMES;
}

/**
 * `name=value` pairs of a Cookie header. Where a name comes twice the first one is kept: browsers send
 * the cookie with the longest path first.
 */
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

/** A Set-Cookie value: HttpOnly (page scripts never read it), SameSite=Strict, the whole site's path. */
export function setCookie(name: string, value: string, maxAgeSeconds: number, https: boolean): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${https ? '; Secure' : ''}`;
}
