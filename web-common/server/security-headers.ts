// The security headers of the project's pages, the operator console and the configurator
// (docs/web-kit.md): only the page's own script and stylesheet run (no inline script or style, no
// eval, nothing from a CDN), it talks only to its own server, nothing frames it, nothing is
// MIME-sniffed, no referrer leaves it, and it asks for no device. One policy for both apps: where
// their policies differed, the stricter one (no font-src: neither page loads a font; a
// Permissions-Policy for both).
import type { RequestHandler, Response } from 'express';

export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-security-policy': PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=()',
};

export function setPageSecurityHeaders(res: Response): void {
  res.set(PAGE_HEADERS);
}

/** The same headers on every answer of a server that serves only its page and the page's API. */
export function securityHeaders(): RequestHandler {
  return (_req, res, next) => {
    setPageSecurityHeaders(res);
    next();
  };
}
