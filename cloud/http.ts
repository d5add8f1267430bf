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

/** Maps anything thrown to the catalog; unknown errors are a logged 500 with no detail to the client. */
export function renderError(res: ServerResponse, err: unknown, log: FunctionLogger | undefined, context: Record<string, unknown> = {}): void {
  let apiError: ApiError;
  if (isApiError(err)) {
    apiError = err;
  } else if (isBodyParserError(err)) {
    apiError =
      err.type === 'entity.too.large'
        ? new ApiError('payload_too_large', { limit_bytes: err.limit })
        : err.type === 'entity.parse.failed'
          ? new ApiError('invalid_json')
          : new ApiError('invalid_body', undefined, 'The request body could not be read');
  } else if (isClientError(err)) {
    // Express and its router refuse some requests themselves (e.g. a path segment that is not valid
    // percent-encoding); those are the client's fault, not ours.
    apiError = new ApiError('bad_request', undefined, `The request is malformed: ${err.message.slice(0, 200)}`);
  } else {
    apiError = new ApiError('internal_error');
    log?.error('unhandled exception', { ...context, error: err instanceof Error ? err.message : String(err), stack: err instanceof Error ? err.stack : undefined });
  }
  if (apiError.status < 500) log?.info('request refused', { ...context, status: apiError.status, error: apiError.code });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (apiError.status === 413) res.setHeader('connection', 'close');
  sendJson(res, apiError.status, apiError.toBody());
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

/**
 * Reads a request body into memory, never more than `limitBytes`. Past the limit it stops keeping
 * data, keeps discarding (so that the client can read the 413 answer) up to `discardBytes`, then
 * rejects with BodyTooLargeError; a client that goes on past that is disconnected.
 */
export function readBodyLimited(req: IncomingMessage, limitBytes: number, discardBytes = 4 * 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let over = false;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
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
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (!over) resolve(Buffer.concat(chunks, received));
    };
    const onError = (err: Error) => {
      cleanup();
      if (!over) reject(err);
    };
    const onAborted = () => onError(new Error('request aborted'));
    function cleanup() {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
  });
}
