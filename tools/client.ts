// A small HTTP client for the cloud's admin and appconfig APIs, used by the `fleet` commands.
import { createReadStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
export class CloudRequestError extends Error {
  override name = 'CloudRequestError';
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

export class CloudUnreachableError extends Error {
  override name = 'CloudUnreachableError';
}

/**
 * The sentence for a cloud that does not answer (exit 3): where it was looked for, why, and the two ways
 * out, start it here or say where it runs (docs/cli-errors.md).
 */
export function unreachableMessage(url: string, cause: string): string {
  return `the cloud at ${url} could not be reached (${cause}): start it (npm start, or fleet serve) or point --cloud (or FLEET_CLOUD_URL) at a running cloud`;
}

export class CloudClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: () => Promise<string>,
  ) {}

  async request(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    return this.send(method, path, headers, body === undefined ? undefined : JSON.stringify(body), 30_000);
  }

  /**
   * Streams a file as the request body (application/octet-stream, its length declared), never holding
   * it whole: a firmware image upload (docs/firmware-images.md).
   */
  async upload(method: string, path: string, file: string): Promise<{ status: number; body: unknown }> {
    const { size } = statSync(file);
    const body = Readable.toWeb(createReadStream(file)) as ReadableStream<Uint8Array>;
    return this.send(method, path, { 'content-type': 'application/octet-stream', 'content-length': String(size) }, body, 300_000);
  }

  private async send(method: string, path: string, headers: Record<string, string>, body: string | ReadableStream<Uint8Array> | undefined, timeoutMs: number): Promise<{ status: number; body: unknown }> {
    let res: Response;
    try {
      res = await fetch(cloudEndpoint(this.baseUrl, path), {
        method,
        headers: { authorization: `Bearer ${await this.token()}`, ...headers },
        body,
        signal: AbortSignal.timeout(timeoutMs),
        ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
      } as RequestInit);
    } catch (err) {
      // Node's fetch: "fetch failed", the socket's error as its cause (an AggregateError without a message when every address refused).
      const inner = err instanceof Error && err.cause instanceof Error ? err.cause : undefined;
      const cause = inner ? inner.message || (inner as NodeJS.ErrnoException).code || inner.name : err instanceof Error ? err.message : String(err);
      throw new CloudUnreachableError(unreachableMessage(this.baseUrl, cause));
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      /* keep the text */
    }
    if (!res.ok) {
      const e = parsed as { error?: string; message?: string } | null;
      throw new CloudRequestError(res.status, e?.error, [`${method} ${path}:`, res.status, e?.error, (e?.message ?? text).trim()].filter((part) => part !== undefined && part !== '').join(' '), parsed);
    }
    return { status: res.status, body: parsed };
  }
}

/**
 * The URL of an API path on a cloud: the base URL's own path is a prefix (a cloud behind a reverse
 * proxy at http://host/fleet-api), kept for every request; `new URL(path, base)` would drop it.
 */
export function cloudEndpoint(baseUrl: string, path: string): URL {
  return new URL(baseUrl.replace(/\/+$/, '') + path);
}

/** Encodes each path segment. */
export function path(...segments: string[]): string {
  return '/' + segments.map(encodeURIComponent).join('/');
}
