// The text of HTTP/1.1 on a board (RFC 9112): on its listeners, request targets, response heads and the
// JSON refusals a listener makes before the core sees a request (docs/board-http-limits.md); for its
// own requests (http-client.ts), URLs and request heads.
import { utf8Encode } from '../../../core/bytes.ts';
import { DeviceError, type DeviceErrorCode, type DeviceErrorStatus } from '../../../core/errors.ts';
import type { HttpResponse } from '../../../hal/network.ts';

const REASONS: Readonly<Record<number, string>> = Object.freeze({
  100: 'Continue', 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 304: 'Not Modified',
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  408: 'Request Timeout', 409: 'Conflict', 411: 'Length Required', 412: 'Precondition Failed',
  413: 'Content Too Large', 414: 'URI Too Long', 417: 'Expectation Failed', 429: 'Too Many Requests',
  431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 501: 'Not Implemented',
  503: 'Service Unavailable',
});

/**
 * A refusal: an HTTP status, a stable error code and a message, answered as JSON. A DeviceError, so
 * that one the core meets while reading a body (a time-out, the client leaving) is answered as the
 * client's fault, not logged as the board's.
 */
export class HttpRefusal extends DeviceError {
  override name = 'HttpRefusal';
  declare readonly headers: Record<string, string>;
  constructor(status: DeviceErrorStatus, code: DeviceErrorCode, message: string, headers: Record<string, string> = {}) {
    super(status, code, message, undefined, headers);
  }
}

export function refusalResponse(refusal: HttpRefusal): HttpResponse {
  const body = utf8Encode(JSON.stringify({ error: refusal.code, message: refusal.message }));
  return { status: refusal.status, headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...refusal.headers }, body };
}

function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text; // malformed percent-encoding in a query value: kept as sent
  }
}

/**
 * Origin-form ("/path?query") or absolute-form ("http://host/path?query", RFC 9112 section 3.2.2).
 * The path stays percent-encoded: the core's router decodes each segment once (docs/storage.md).
 */
export function parseTarget(target: string): { path: string; query: Record<string, string> } {
  let rest = target;
  const absolute = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#\s]+/.exec(rest);
  if (absolute) rest = rest.slice(absolute[0].length) || '/';
  if (!rest.startsWith('/') || /[\s#]/.test(rest)) throw new HttpRefusal(400, 'bad_request_target', 'The request target is not origin-form or absolute-form');
  const q = rest.indexOf('?');
  const query: Record<string, string> = {};
  if (q >= 0) {
    for (const pair of rest.slice(q + 1).split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq));
      if (!(name in query)) query[name] = eq < 0 ? '' : decodeComponent(pair.slice(eq + 1));
    }
  }
  return { path: q >= 0 ? rest.slice(0, q) : rest, query };
}

/** The status line and headers; `connection: close` as every Moddable http response (one request per connection). */
export function responseHead(status: number, headers: Record<string, string>): Uint8Array {
  let head = `HTTP/1.1 ${status} ${REASONS[status] ?? 'Status'}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'connection') continue;
    if (/[\r\n]/.test(name + value)) throw new Error(`header ${name} holds a line break`);
    head += `${name}: ${value}\r\n`;
  }
  return utf8Encode(`${head}connection: close\r\n\r\n`);
}

export const CONTINUE_LINE = utf8Encode('HTTP/1.1 100 Continue\r\n\r\n');

export interface RequestUrl {
  secure: boolean;
  host: string;
  port: number;
  /** The request target in origin-form (RFC 9112 section 3.2.1). */
  path: string;
}

export function parseUrl(url: string): RequestUrl {
  const m = /^(https?):\/\/(\[[0-9A-Fa-f:.]+\]|[^/:?#\s]+)(?::(\d{1,5}))?([/?][^#\s]*)?$/.exec(url);
  if (!m) throw new Error(`not an http(s) URL: ${JSON.stringify(url)}`);
  const secure = m[1] === 'https';
  const path = m[4] ?? '/';
  return { secure, host: m[2]!, port: m[3] ? Number(m[3]) : secure ? 443 : 80, path: path.startsWith('?') ? `/${path}` : path };
}

/** The request line and headers: Host with its port where it is not the scheme's, one request per connection. */
export function requestHead(method: string, url: RequestUrl, headers: Record<string, string>, bodyLength: number | undefined): string {
  const lines = [`${method} ${url.path} HTTP/1.1`];
  const given = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    if (/[\r\n]/.test(name + value)) throw new Error(`header ${name} holds a line break`);
    const lower = name.toLowerCase();
    if (lower === 'connection' || lower === 'content-length' || lower === 'transfer-encoding') continue; // the client's to say
    given.add(lower);
    lines.push(`${name}: ${value}`);
  }
  if (!given.has('host')) lines.push(`host: ${url.port === (url.secure ? 443 : 80) ? url.host : `${url.host}:${url.port}`}`);
  if (bodyLength !== undefined) lines.push(`content-length: ${bodyLength}`);
  lines.push('connection: close', '', '');
  return lines.join('\r\n');
}
