// Building responses and reading small bodies.
import type { BodyReader, HttpResponse } from '../../hal/network.ts';
import { concatBytes, utf8Encode } from '../bytes.ts';
import { DeviceError } from './errors.ts';
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
  return jsonResponse(err.status, body);
}

/** Reads a whole body of at most `limit` bytes (records and small JSON requests only). */
export async function readSmallBody(body: BodyReader, limit: number): Promise<Uint8Array> {
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
    chunks.push(chunk);
  }
  return concatBytes(...chunks);
}

export async function readJsonBody(body: BodyReader, limit: number): Promise<unknown> {
  const bytes = await readSmallBody(body, limit);
  try {
    return parseJson(bytes);
  } catch (err) {
    if (err instanceof JsonTextError && err.tooDeep) {
      throw new DeviceError(400, 'json_too_deep', `The request body nests deeper than ${MAX_JSON_DEPTH} levels`, { max_depth: MAX_JSON_DEPTH });
    }
    throw new DeviceError(400, 'invalid_json', `The request body is not valid JSON${err instanceof JsonTextError ? ` (${err.why})` : ''}`);
  }
}

/** Reads and discards the rest of a body. */
export async function drain(body: BodyReader): Promise<void> {
  while ((await body.read()) !== null) {
    /* discard */
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
