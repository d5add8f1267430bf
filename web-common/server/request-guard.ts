// What keeps another site (or a DNS-rebound name) from driving a page's server through the user's
// browser (docs/web-kit.md, docs/configurator-security.md, docs/operator-console.md):
// - Host must be one of the server's own addresses: a rebound name (evil.example -> 127.0.0.1) is 421.
// - A request that changes something comes from the page's own origin whenever the browser says where
//   it comes from (Origin, Sec-Fetch-Site), and carries a header a cross-site form cannot send and a
//   cross-site fetch cannot send without a CORS preflight, which these servers never grant: the
//   configurator's fixed page header, the console's CSRF token.
import type { Request, RequestHandler, Response } from 'express';
import { PAGE_HEADER } from '../page-header.ts';

export interface GuardRefusal {
  status: number;
  code: 'forbidden_host' | 'cross_site_request';
  message: string;
}

/** Refuses (421) a request whose Host is not one of `allowedHosts()` (host:port, lowercase). */
export function hostGuard(allowedHosts: () => Set<string>, refuse: (res: Response, r: GuardRefusal) => void): RequestHandler {
  return (req, res, next) => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts().has(host)) return refuse(res, { status: 421, code: 'forbidden_host', message: `This server does not answer for the host ${JSON.stringify(host.slice(0, 80))}` });
    next();
  };
}

/** The origin the page is served from, as this request reached its server. */
export function ownOrigin(req: Request): string {
  return `${req.protocol}://${req.headers.host ?? ''}`;
}

/**
 * What the browser says of a request that is not the page's own: an Origin that is another origin,
 * or a Sec-Fetch-Site other than same-origin (each checked only when sent); null when neither.
 */
export function foreignSender(req: Request): { header: 'origin' | 'sec-fetch-site'; value: string } | null {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== ownOrigin(req)) return { header: 'origin', value: origin };
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return { header: 'sec-fetch-site', value: String(site) };
  return null;
}

/** For the configurator's API: from its own origin (when the browser says), with the page header. */
export function pageRequestGuard(refuse: (res: Response, r: GuardRefusal) => void): RequestHandler {
  return (req, res, next) => {
    const foreign = foreignSender(req);
    const why = foreign
      ? foreign.header === 'origin'
        ? `the request comes from ${foreign.value.slice(0, 80)}`
        : `the browser says the request is ${foreign.value}`
      : req.headers[PAGE_HEADER] !== '1'
        ? `the ${PAGE_HEADER} header is missing`
        : null;
    if (why) return refuse(res, { status: 403, code: 'cross_site_request', message: `Refused: ${why}; changes are made only from the page itself` });
    next();
  };
}
