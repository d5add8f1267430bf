// Building responses and reading small bodies.
import type { BodyReader, HttpResponse, RequestMemory } from '../../hal/network.ts';
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
 * Reads a whole body of at most `limit` bytes (records and small JSON requests only). With the board's
 * request memory (request-memory.ts), the bytes are taken from it as they arrive, and `held` says how
 * many the caller must give back; past it, 503 board_busy with Retry-After.
 */
export async function readSmallBody(body: BodyReader, limit: number, budget?: RequestMemory, held = { bytes: 0 }): Promise<Uint8Array> {
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
export async function readJsonBody(body: BodyReader, limit: number, budget?: RequestMemory): Promise<unknown> {
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
