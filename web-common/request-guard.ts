// What keeps another site (or a DNS-rebound name) from driving a page's local server through the
// user's browser (docs/configurator-security.md):
// - Host must be one of the server's own addresses: a rebound name (evil.example -> 127.0.0.1) is 421.
// - Every API request carries a custom header, which a cross-site form cannot send and a cross-site
//   fetch cannot send without a CORS preflight that this server never grants; and when the browser
//   says where the request comes from (Origin, Sec-Fetch-Site), it must be this origin.
import type { Request, RequestHandler } from 'express';

export const CSRF_HEADER = 'x-fleet-page';

export interface GuardRefusal {
  status: number;
  code: 'forbidden_host' | 'cross_site_request';
  message: string;
}

/** Host names a loopback server is reached by; `allowed(port)` lists host:port forms. */
export function hostGuard(allowedHosts: () => Set<string>, refuse: (res: Parameters<RequestHandler>[1], r: GuardRefusal) => void): RequestHandler {
  return (req, res, next) => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts().has(host)) return refuse(res, { status: 421, code: 'forbidden_host', message: `This server does not answer for the host ${JSON.stringify(host.slice(0, 80))}` });
    next();
  };
}

function sameOrigin(req: Request): string | null {
  const origin = req.headers.origin;
  const expected = `http://${req.headers.host}`;
  if (origin !== undefined && origin !== expected) return `the request comes from ${origin.slice(0, 80)}`;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return `the browser says the request is ${site}`;
  if (req.headers[CSRF_HEADER] !== '1') return `the ${CSRF_HEADER} header is missing`;
  return null;
}

/** For the API routes: custom header present, and Origin / Sec-Fetch-Site (when sent) this origin. */
export function csrfGuard(refuse: (res: Parameters<RequestHandler>[1], r: GuardRefusal) => void): RequestHandler {
  return (req, res, next) => {
    const why = sameOrigin(req);
    if (why) return refuse(res, { status: 403, code: 'cross_site_request', message: `Refused: ${why}; changes are made only from the page itself` });
    next();
  };
}
