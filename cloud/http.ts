// Small HTTP helpers shared by the Express routes and the OTA fast path: JSON answers, the error
// renderer (the catalog's codes, never a stack trace), and a bounded body reader.
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, isApiError } from './errors.ts';
import type { FunctionLogger } from './logging.ts';

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  sendBytes(res, status, Buffer.from(JSON.stringify(value)));
}

export function sendBytes(res: ServerResponse, status: number, body: Buffer, contentType = 'application/json; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': body.length });
  res.end(body);
}

/**
 * Maps anything thrown to the catalog; unknown errors are a logged 500 with no detail to the client.
 * A client that went away mid-request is not an error of the service: logged at INFO, not answered.
 */
export function renderError(
  res: ServerResponse,
  err: unknown,
  log: FunctionLogger | undefined,
  context: Record<string, unknown> = {},
  opts: { close?: boolean; bodyComing?: boolean } = {},
): void {
  if (err instanceof ClientAbortedError || (isBodyParserError(err) && err.type === 'request.aborted')) {
    log?.info('client aborted upload', { ...context, received_bytes: err instanceof ClientAbortedError ? err.receivedBytes : (err as { received?: number }).received });
    if (!res.headersSent) res.destroy();
    return;
  }
  let apiError: ApiError;
  if (isApiError(err)) {
    apiError = err;
  } else if (err instanceof BodyIdleTimeoutError) {
    apiError = new ApiError('request_timeout', { idle_ms: err.idleMs }, `The request body sent nothing for ${err.idleMs} ms`);
  } else if (isBodyParserError(err)) {
    apiError =
      err.type === 'entity.too.large'
        ? new ApiError('payload_too_large', { limit_bytes: err.limit })
        : err.type === 'entity.parse.failed'
          ? new ApiError('invalid_json')
          : err.type === 'charset.unsupported' || err.type === 'encoding.unsupported'
            ? new ApiError('unsupported_media_type', { reason: err.type }, 'The request body must be uncompressed application/json in UTF-8')
            : new ApiError('invalid_body', undefined, 'The request body could not be read');
  } else if (isClientError(err)) {
    // Express and its router refuse some requests themselves (e.g. a path segment that is not valid
    // percent-encoding); those are the client's fault, not ours.
    apiError = new ApiError('bad_request', undefined, `The request is malformed: ${err.message.slice(0, 200)}`);
  } else {
    apiError = new ApiError('internal_error');
    log?.error('unhandled exception', { ...context, error: err instanceof Error ? err.message : String(err), stack: err instanceof Error ? err.stack : undefined });
  }
  if (apiError.status < 500 || apiError.status === 503) log?.info('request refused', { ...context, status: apiError.status, error: apiError.code });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A saturated store or upload gate (docs/fleet-scale.md): say when to come back.
  if (apiError.status === 503) res.setHeader('retry-after', String(apiError.details?.retry_after_seconds ?? 1));
  // A client that stalled (408) sends nothing more: close at once. Otherwise, when a body is still
  // arriving, read it away before closing (lingerForBody), so the answer is not lost to a reset.
  // `bodyComing: false`: an `Expect: 100-continue` request answered without a 100 sends no body.
  const close = opts.close || apiError.status === 413 || apiError.status === 408;
  if (apiError.status === 408 || opts.bodyComing === false || !lingerForBody(res, close)) {
    if (close) res.setHeader('connection', 'close');
  }
  let body: Buffer;
  try {
    body = Buffer.from(JSON.stringify(apiError.toBody()));
  } catch {
    // details that cannot be serialized (too deep): the code and message still go out.
    body = Buffer.from(JSON.stringify({ error: apiError.code, message: apiError.message }));
  }
  sendBytes(res, apiError.status, body);
}

/**
 * Set on a socket while the rest of a body is read away after its answer: a parse error in those
 * bytes must not produce a second answer to the same request (the clientError hook then just closes).
 */
export const ANSWERED_BEFORE_BODY = Symbol('answeredBeforeBody');

/** How much of an unwanted body is read away after an error answer, and for how long, before a reset. */
export const LINGER_MAX_BYTES = 4 * 1024 * 1024;
export const LINGER_MS = 10_000;

/**
 * Called before an answer is written while the request body may still be arriving (an error found
 * on the headers: 401, 404, 413, …). Closing then would make the kernel reset the connection over
 * the unread bytes, and a client still writing its body loses the answer with the reset. So the
 * connection is kept (no `Connection: close`), the rest of the body is read and dropped, and the
 * connection is ended once the body is complete when it was to close (`close`, or the client asked
 * for it): "lingering close". At most LINGER_MAX_BYTES or LINGER_MS, then it is destroyed.
 * Returns false when there is no body pending (nothing done).
 */
export function lingerForBody(res: ServerResponse, close: boolean): boolean {
  const req = res.req as IncomingMessage | undefined;
  if (!req || req.complete || req.destroyed || res.headersSent) return false;
  const endAfter = close || !res.shouldKeepAlive;
  res.shouldKeepAlive = true;
  const socket = req.socket as IncomingMessage['socket'] & { [ANSWERED_BEFORE_BODY]?: boolean };
  socket[ANSWERED_BEFORE_BODY] = true;
  let drained = 0;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  const cleanup = () => {
    clearTimeout(timer);
    req.off('data', onData);
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > LINGER_MAX_BYTES) {
      cleanup();
      socket.destroy();
    }
  };
  req.on('data', onData);
  req.once('end', () => {
    cleanup();
    socket[ANSWERED_BEFORE_BODY] = false;
    if (endAfter) socket.end();
  });
  req.once('close', cleanup);
  req.on('error', () => undefined);
  return true;
}

interface BodyParserError {
  type: string;
  limit?: number;
}

function isClientError(err: unknown): err is Error & { status: number } {
  const status = (err as { status?: unknown } | null)?.status;
  return err instanceof Error && typeof status === 'number' && status >= 400 && status < 500;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return typeof err === 'object' && err !== null && typeof (err as { type?: unknown }).type === 'string' && 'status' in err;
}

/** Wraps an async route so that a rejection reaches the error middleware. */
export function route(fn: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req, res, next) => {
    fn(req, res).catch(next);
  };
}

export function errorMiddleware(logFor: (req: Request) => FunctionLogger | undefined): ErrorRequestHandler {
  return (err, req, res, _next) => {
    renderError(res, err, logFor(req), { method: req.method, path: req.path });
  };
}

export class BodyTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`body exceeds ${limitBytes} bytes`);
  }
}

/** The client closed the connection before the whole body arrived. */
export class ClientAbortedError extends Error {
  constructor(readonly receivedBytes: number) {
    super('client aborted the request');
  }
}

/** The body stopped arriving for `idleMs` (docs/cloud-limits.md). */
export class BodyIdleTimeoutError extends Error {
  constructor(readonly idleMs: number) {
    super(`no body data for ${idleMs} ms`);
  }
}
