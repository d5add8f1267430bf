// Building responses and reading small bodies.
import type { BodyReader, HttpResponse } from '../../hal/network.ts';
import { concatBytes, utf8Encode } from '../bytes.ts';
import { drain } from '../body.ts';
import { DeviceError } from '../errors.ts';
import { JsonTextError, MAX_JSON_DEPTH, parseJson } from '../json-validator.ts';

export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): HttpResponse {
  const body = utf8Encode(JSON.stringify(value));
  return { status, headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers }, body };
}

export function emptyResponse(status: number, headers: Record<string, string> = {}): HttpResponse {
  return { status, headers: { 'content-length': '0', ...headers } };
}

export function errorResponse(err: DeviceError): HttpResponse {
  const body: Record<string, unknown> = { error: err.code, message: err.message };
  if (err.details) body.details = err.details;
  return jsonResponse(err.status, body, err.headers);
}

/**
 * What a board holds of request bodies in memory at once (records and small JSON requests), in bytes.
 * The chip's chunk heap is 78,848 bytes and a body read whole costs it about three times its size
 * (the pieces, the joined bytes, the parsed value): two or three 16 KB record bodies read at the
 * same time ran a controller out of memory (XS abort, a reset; found by the device fuzz on the SDK
 * build). A body that would pass the budget is refused with 503 board_busy and Retry-After, as a
 * flood of connections is (docs/board-http-limits.md); one body of any accepted size always fits.
 */
export class BodyBudget {
  private held = 0;

  constructor(readonly bytes: number) {}

  /** Takes `n` bytes of the budget; false when they are not there. */
  take(n: number): boolean {
    if (this.held + n > this.bytes) return false;
    this.held += n;
    return true;
  }

  give(n: number): void {
    this.held = Math.max(0, this.held - n);
  }

  /** Bytes held now (for tests and the bench). */
  inUse(): number {
    return this.held;
  }
}

/**
 * Reads a whole body of at most `limit` bytes (records and small JSON requests only). With a budget,
 * the bytes are taken from it as they arrive and `held` says how many the caller must give back.
 */
export async function readSmallBody(body: BodyReader, limit: number, budget?: BodyBudget, held = { bytes: 0 }): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const chunk = await body.read();
    if (chunk === null) break;
    total += chunk.length;
    if (total > limit) {
      await drain(body);
      throw new DeviceError(413, 'body_too_large', `The request body exceeds ${limit} bytes`, { limit_bytes: limit });
    }
    if (budget) {
      if (!budget.take(chunk.length)) {
        chunks.length = 0;
        await drain(body);
        throw new DeviceError(503, 'board_busy', 'The board is reading other requests; try again shortly', { retry_after_seconds: 1 }, { 'retry-after': '1' });
      }
      held.bytes += chunk.length;
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : concatBytes(...chunks);
}

/** A small body parsed as JSON; with a budget, its bytes are held from the budget until it is parsed. */
export async function readJsonBody(body: BodyReader, limit: number, budget?: BodyBudget): Promise<unknown> {
  const held = { bytes: 0 };
  try {
    const bytes = await readSmallBody(body, limit, budget, held);
    try {
      return parseJson(bytes);
    } catch (err) {
      if (err instanceof JsonTextError && err.tooDeep) {
        throw new DeviceError(400, 'json_too_deep', `The request body nests deeper than ${MAX_JSON_DEPTH} levels`, { max_depth: MAX_JSON_DEPTH });
      }
      throw new DeviceError(400, 'invalid_json', `The request body is not valid JSON${err instanceof JsonTextError ? ` (${err.why})` : ''}`);
    }
  } finally {
    budget?.give(held.bytes);
  }
}

/** A reader over one in-memory buffer, in chunks. */
export function bytesReader(bytes: Uint8Array, chunkBytes = 4096): BodyReader {
  let at = 0;
  return {
    async read() {
      if (at >= bytes.length) return null;
      const chunk = bytes.subarray(at, Math.min(at + chunkBytes, bytes.length));
      at += chunk.length;
      return chunk;
    },
  };
}

/** Any body a handler or a client may give (bytes, a reader, or nothing) as a reader. */
export function toBodyReader(body: Uint8Array | BodyReader | undefined): BodyReader {
  if (body === undefined) return bytesReader(new Uint8Array(0));
  return body instanceof Uint8Array ? bytesReader(body) : body;
}
