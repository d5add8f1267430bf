// Security headers for the project's browser pages (the configurator; any other page the project
// serves can use the same middleware): only the page's own scripts and styles run (no inline script,
// no eval), nothing frames the page, nothing is MIME-sniffed, no referrer leaves the page.
import type { RequestHandler } from 'express';

export interface PagePolicy {
  /** Extra sources for connect-src beyond 'self' (none for a page that talks only to its server). */
  connectSrc?: string[];
}

/** The Content-Security-Policy of a page whose scripts, styles and requests are all its own. */
export function contentSecurityPolicy(o: PagePolicy = {}): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "font-src 'self'",
    `connect-src ${["'self'", ...(o.connectSrc ?? [])].join(' ')}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function securityHeaders(o: PagePolicy = {}): RequestHandler {
  const csp = contentSecurityPolicy(o);
  return (_req, res, next) => {
    res.set({
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
      'permissions-policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=()',
    });
    next();
  };
}
