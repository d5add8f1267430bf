// The cookies of the project's page servers (docs/web-kit.md): each holds one random secret (a
// session's id, a CSRF token) and is HttpOnly (page scripts never read it), SameSite=Strict (no other
// site's request carries it) and the whole site's path; Secure over https. What such a secret is, and
// how a server keeps it without keeping it: only its SHA-256, compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Random bytes of a secret: 256 bits, base64url in the cookie, 43 characters. */
const SECRET_BYTES = 32;
const SECRET = /^[A-Za-z0-9_-]{43}$/;

export function newSecret(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

/** Whether a cookie's value has the form of a secret (anything else names nothing). */
export function isSecret(value: string): boolean {
  return SECRET.test(value);
}

/** What a server keeps of a secret: its SHA-256, hex. */
export function secretDigest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Equal strings, compared in constant time. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
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

/**
 * A Set-Cookie value. Without `maxAgeSeconds` the cookie lasts as long as the browser session; 0
 * clears it.
 */
export function setCookie(name: string, value: string, o: { maxAgeSeconds?: number; https?: boolean } = {}): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict${o.maxAgeSeconds === undefined ? '' : `; Max-Age=${o.maxAgeSeconds}`}${o.https ? '; Secure' : ''}`;
}
