// The HTTP transport around the routes: every answer, even to bytes that are not a valid request, is
// a JSON error of the catalog (DESIGN.md section 4). node:http answers some requests on its own (a
// parse error, headers too large or too slow, an unknown Expect, CONNECT, a missing Host) with an
// empty body, and Express answers OPTIONS and unparsable targets itself; the hooks here take those
// over. Decisions and limits: docs/cloud-limits.md.
import type { RequestHandler } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from './errors.ts';
import { ANSWERED_BEFORE_BODY, BodyIdleTimeoutError, BodyTooLargeError, ClientAbortedError, renderError } from './http.ts';
import type { HttpLimits } from './limits.ts';
import { openApiDocument } from './openapi.ts';
import { routePattern } from './schema/routes.ts';

/** A complete HTTP/1.1 response carrying a catalog error, for writing on a raw socket; closes. */
export function rawErrorResponse(err: ApiError, extraHeaders: Record<string, string> = {}): Buffer {
  const body = Buffer.from(JSON.stringify(err.toBody()));
  const head = [
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${body.length}`,
    'connection: close',
    ...Object.entries(extraHeaders).map(([k, v]) => `${k}: ${v}`),
    '',
    '',
  ].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/**
 * Writes the error on the socket unless a response has already started on it (then there is no
 * clean way to answer), and closes the connection once written. A handler still running for that
 * request finds the socket no longer writable: node buffers what it writes and drops it.
 */
export function answerOnSocket(socket: Duplex, err: ApiError, extraHeaders?: Record<string, string>): void {
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    socket.end(rawErrorResponse(err, extraHeaders), () => socket.destroy());
    // A peer that never reads must not keep the socket: the write is small, a second is plenty.
    setTimeout(() => socket.destroy(), 1000).unref();
  } else {
    socket.destroy();
  }
}

/** What node:http's parser and timers report, as the catalog's errors. */
export function clientErrorToApiError(err: NodeJS.ErrnoException): ApiError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('header_too_large');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError('payload_too_large', undefined, 'The chunk extensions are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('request_timeout');
    default:
      return new ApiError('bad_request', { reason: err.code ?? 'parse_error' }, `The request is not valid HTTP/1.1: ${parserReason(err)}`);
  }
}

function parserReason(err: NodeJS.ErrnoException & { reason?: unknown }): string {
  const reason = typeof err.reason === 'string' ? err.reason : err.message;
  return reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 120);
}

/** Allowed methods per documented route, case-insensitive and with an optional trailing slash, as Express matches. */
const ROUTE_METHODS: { pattern: RegExp; methods: string[] }[] = Object.entries(openApiDocument.paths).map(([path, ops]) => {
  const methods = Object.keys(ops).map((m) => m.toUpperCase());
  if (methods.includes('GET')) methods.push('HEAD');
  return { pattern: routePattern(path), methods };
});

/** The methods a documented route allows, or undefined for a path that is no route. */
export function allowedMethods(path: string): string[] | undefined {
  return ROUTE_METHODS.find((r) => r.pattern.test(path))?.methods;
}

/** 405 (with Allow) for a method a known route does not have, 404 for an unknown route; else undefined. */
export function methodRefusal(method: string, path: string): { err: ApiError; headers: Record<string, string> } | undefined {
  const allowed = allowedMethods(path);
  if (allowed) {
    if (allowed.includes(method)) return undefined;
    return {
      err: new ApiError('method_not_allowed', { method: method.slice(0, 32), allowed }, `${method.slice(0, 32)} is not allowed here; allowed: ${allowed.join(', ')}`),
      headers: { allow: allowed.join(', ') },
    };
  }
  if (['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) return undefined; // Express answers (401 first under /admin)
  return { err: new ApiError('route_not_found', { method: method.slice(0, 32), path: path.slice(0, 256) }), headers: {} };
}

/** First Express middleware: OPTIONS, TRACE and the like never reach a router's own OPTIONS answer. */
export function methodGuard(): RequestHandler {
  return (req, res, next) => {
    const refusal = methodRefusal(req.method, req.path);
    if (!refusal) return next();
    for (const [k, v] of Object.entries(refusal.headers)) res.setHeader(k, v);
    next(refusal.err);
  };
}

const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)([/?][^#]*)?$/i;

/**
 * Checks that come before any route, on every request (also ahead of the OTA fast path). Returns an
 * error to answer with, or undefined; may rewrite an absolute-form target to its path.
 */
export function requestRefusal(req: IncomingMessage, limits: HttpLimits): ApiError | undefined {
  const url = req.url ?? '';
  if (url.charCodeAt(0) !== 47 /* / */) {
    // RFC 9112 3.2.2: a server must accept the absolute form; it is routed by its path.
    const m = ABSOLUTE_FORM.exec(url);
    let authorityOk = false;
    if (m) {
      try {
        new URL(`http://${m[1]}/`);
        authorityOk = m[1] !== '';
      } catch {
        authorityOk = false;
      }
    }
    if (!m || !authorityOk) {
      return new ApiError('bad_request', { target: url.slice(0, 64) }, 'The request target must be a path (/...) or an absolute http URL');
    }
    const rest = m[2] ?? '/';
    req.url = rest.startsWith('?') ? `/${rest}` : rest;
  }
  // rawHeaders, not req.headers: node builds that object lazily, and the OTA fast path never needs it.
  const raw = req.rawHeaders;
  if (raw.length / 2 > limits.maxHeaderFields) {
    return new ApiError('header_too_large', { max_fields: limits.maxHeaderFields }, `A request may have at most ${limits.maxHeaderFields} header fields`);
  }
  let host = false;
  let body = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4) host ||= name.toLowerCase() === 'host';
    else if (name.length === 14) body ||= name.toLowerCase() === 'content-length' && raw[i + 1] !== '0';
    else if (name.length === 17) body ||= name.toLowerCase() === 'transfer-encoding';
  }
  if (!host && req.httpVersion === '1.1') {
    return new ApiError('bad_request', { header: 'host' }, 'An HTTP/1.1 request must have a Host header');
  }
  if (body && (req.method === 'GET' || req.method === 'HEAD')) {
    return new ApiError('body_not_allowed');
  }
  return undefined;
}

/**
 * Installs the socket-level hooks on a server: parse errors, header overflow and time-outs
 * (clientError), CONNECT, and Expect values other than 100-continue. All answer JSON and close.
 */
export function installTransportHooks(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { [ANSWERED_BEFORE_BODY]?: boolean })[ANSWERED_BEFORE_BODY]) {
      socket.destroy();
      return;
    }
    answerOnSocket(socket, clientErrorToApiError(err));
  });
  // CONNECT has no path to route (authority form): answered like any method a route does not allow.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    const target = req.url ?? '';
    const refusal = target.startsWith('/') ? methodRefusal('CONNECT', target.split('?', 1)[0]!) : undefined;
    if (refusal) answerOnSocket(socket, refusal.err, refusal.headers);
    else answerOnSocket(socket, new ApiError('bad_request', { method: 'CONNECT' }, 'CONNECT is not supported'));
  });
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    renderError(res, new ApiError('expectation_failed'), undefined, {}, { close: true });
  });
}


export interface UploadBody {
  /** The body, or null when it was only counted (`keep: false`). */
  body: Buffer | null;
  /** Bytes received. */
  length: number;
  /** The first bytes of the body (up to 16), kept even when the body is not. */
  head: Buffer;
}

/**
 * Reads an upload body (backups) for the hot path of a boot storm (docs/fleet-scale.md). With a
 * declared Content-Length (node's parser holds the client to it) the body is copied into one Buffer
 * of that size allocated once, instead of keeping every socket chunk until the end and concatenating
 * them (a second copy, and twice the memory at the end); without one (chunked), chunks are collected
 * as before. `keep: false` only counts the body and keeps its first bytes: a 304 needs no body.
 * Limits: never more than `limitBytes` kept; past it the rest is read away up to `discardBytes` so
 * that the client reads its 413, then BodyTooLargeError (a client that goes on past that is
 * disconnected); a client that closes mid-body is ClientAbortedError; one that sends nothing for
 * `idleTimeoutMs`, BodyIdleTimeoutError. `alloc` gives the Buffer of the declared size (a pool's).
 */
export function readUploadBody(
  req: IncomingMessage,
  limitBytes: number,
  opts: { keep?: boolean; discardBytes?: number; idleTimeoutMs?: number; alloc?: (size: number) => Buffer } = {},
): Promise<UploadBody> {
  const keep = opts.keep ?? true;
  const discardBytes = opts.discardBytes ?? 4 * 1024 * 1024;
  const declared = Number(req.headers['content-length']);
  let exact = keep && Number.isSafeInteger(declared) && declared >= 0 && declared <= limitBytes ? (opts.alloc ?? Buffer.allocUnsafe)(declared) : null;
  // A client gone before its body was asked for (it closed while the request waited for an upload
  // slot or for authentication) sends no more events: without this the read would wait for the idle
  // time-out, holding its upload slot and, at shutdown, the process (docs/fleet-scale.md).
  if (req.destroyed && !req.complete) return Promise.reject(new ClientAbortedError(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const head = Buffer.alloc(16);
    let received = 0;
    let over = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const armIdle = () => {
      if (opts.idleTimeoutMs === undefined) return;
      if (idleTimer) idleTimer.refresh();
      else idleTimer = setTimeout(onIdle, opts.idleTimeoutMs).unref();
    };
    const onIdle = () => {
      cleanup();
      chunks.length = 0;
      if (!over) reject(new BodyIdleTimeoutError(opts.idleTimeoutMs!));
    };
    const onData = (chunk: Buffer) => {
      const at = received;
      received += chunk.length;
      armIdle();
      if (over) {
        if (received > limitBytes + discardBytes) {
          cleanup();
          req.destroy();
        }
        return;
      }
      if (received > limitBytes) {
        over = true;
        chunks.length = 0;
        reject(new BodyTooLargeError(limitBytes));
        return;
      }
      if (at < head.length) chunk.copy(head, at, 0, Math.min(chunk.length, head.length - at));
      if (!keep) return;
      if (exact && received > exact.length) {
        // More than declared (node's parser does not let that happen): keep the chunks instead.
        chunks.push(exact.subarray(0, at));
        exact = null;
      }
      if (exact) chunk.copy(exact, at);
      else chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (over) return;
      const headBytes = head.subarray(0, Math.min(received, head.length));
      if (!keep) return resolve({ body: null, length: received, head: headBytes });
      // Never bytes that did not arrive: a shorter body (node reports that as an abort) is cut.
      const body = exact ? (received === exact.length ? exact : exact.subarray(0, received)) : Buffer.concat(chunks, received);
      resolve({ body, length: received, head: headBytes });
    };
    const onAborted = () => {
      cleanup();
      chunks.length = 0;
      if (!over) reject(new ClientAbortedError(received));
    };
    const onError = (err: NodeJS.ErrnoException) => {
      cleanup();
      chunks.length = 0;
      if (over) return;
      reject(req.destroyed || err.code === 'ECONNRESET' ? new ClientAbortedError(received) : err);
    };
    function cleanup() {
      if (idleTimer) clearTimeout(idleTimer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      // Keep a listener: an error after we stopped listening must not become an uncaught one.
      req.on('error', () => undefined);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    armIdle();
  });
}
