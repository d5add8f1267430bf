// The headers every page the cloud serves carries (the operator console; docs/operator-console.md):
// its own scripts and styles only (no inline script, no eval, no CDN), no framing, no sniffing, no
// referrer. One place, so that another web app served the same way gets the same policy.
import type { Response } from 'express';

/** Content-Security-Policy of a page: everything from its own origin, nothing inline, never framed. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function setPageSecurityHeaders(res: Response): void {
  res.setHeader('content-security-policy', PAGE_CSP);
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('cross-origin-opener-policy', 'same-origin');
  res.setHeader('cross-origin-resource-policy', 'same-origin');
}
