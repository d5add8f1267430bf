// Raw HTTP/1.1 over a socket, for the fuzz suites and the tests that need bytes no HTTP client would
// send: exact bytes in steps (with pauses, FIN or reset), answers parsed as they come, and the error
// contract every answer must keep.
import { connect } from 'node:net';

export interface RawStep {
  write?: Buffer | string;
  /** Pause after this step's write. */
  delayMs?: number;
  /** Half-close (FIN) after this step. */
  end?: boolean;
  /** Reset the connection here (nothing after it is sent). */
  destroy?: boolean;
}

export interface RawResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawResult {
  responses: RawResponse[];
  /** The server closed the connection (before our time-out). */
  closed: boolean;
  timedOut: boolean;
  /** Bytes after the last complete response (an answer cut short, or garbage). */
  trailing: Buffer;
}

export interface RawTarget {
  host: string;
  port: number;
}

/**
 * Sends `steps` on a new connection and reads what comes back until the server closes, until
 * `expectResponses` answers are complete, or until `timeoutMs`. `methods[i]` is the method of the
 * i-th request (a HEAD answer has no body).
 */
export function rawExchange(
  target: RawTarget,
  steps: RawStep[] | Buffer | string,
  opts: { methods?: string[]; expectResponses?: number; timeoutMs?: number } = {},
): Promise<RawResult> {
  const list: RawStep[] = Array.isArray(steps) ? steps : [{ write: steps }];
  const methods = opts.methods ?? ['GET'];
  return new Promise((resolve) => {
    const socket = connect(target.port, target.host);
    let buf = Buffer.alloc(0);
    let done = false;
    let closed = false;
    let timedOut = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const parsed = parseResponses(buf, methods, closed);
      resolve({ responses: parsed.responses, closed, timedOut, trailing: buf.subarray(parsed.consumed) });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      finish();
    }, opts.timeoutMs ?? 5000);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (opts.expectResponses !== undefined && parseResponses(buf, methods, false).responses.length >= opts.expectResponses) finish();
    });
    socket.on('error', () => {
      // EPIPE/ECONNRESET after the server answered and closed: what was read still counts.
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('connect', async () => {
      for (const step of list) {
        if (done || socket.destroyed) return;
        if (step.write !== undefined) socket.write(step.write);
        if (step.delayMs) await new Promise((r) => setTimeout(r, step.delayMs));
        if (step.end) socket.end();
        if (step.destroy) {
          socket.destroy();
          return;
        }
      }
    });
  });
}

/** Parses as many complete responses as `buf` holds (skipping 1xx); a body without length ends at close. */
export function parseResponses(buf: Buffer, methods: string[], closed: boolean): { responses: RawResponse[]; consumed: number } {
  const responses: RawResponse[] = [];
  let pos = 0;
  for (;;) {
    const headEnd = buf.indexOf('\r\n\r\n', pos);
    if (headEnd < 0) break;
    const lines = buf.toString('latin1', pos, headEnd).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? NaN);
    if (!Number.isFinite(status)) break;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    let p = headEnd + 4;
    if (status >= 100 && status < 200) {
      pos = p;
      continue;
    }
    const method = methods[responses.length] ?? methods[methods.length - 1] ?? 'GET';
    let body: Buffer;
    if (method === 'HEAD' || status === 204 || status === 304) {
      body = Buffer.alloc(0);
    } else if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = [];
      let complete = false;
      for (;;) {
        const lineEnd = buf.indexOf('\r\n', p);
        if (lineEnd < 0) break;
        const size = parseInt(buf.toString('latin1', p, lineEnd), 16);
        if (!Number.isFinite(size)) break;
        if (size === 0) {
          const end = buf.indexOf('\r\n\r\n', lineEnd);
          if (end < 0) break;
          p = end + 4;
          complete = true;
          break;
        }
        if (lineEnd + 2 + size + 2 > buf.length) break;
        parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
        p = lineEnd + 2 + size + 2;
      }
      if (!complete) break;
      body = Buffer.concat(parts);
    } else if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      if (p + n > buf.length) break;
      body = buf.subarray(p, p + n);
      p += n;
    } else {
      if (!closed) break;
      body = buf.subarray(p);
      p = buf.length;
    }
    responses.push({ status, headers, body: Buffer.from(body) });
    pos = p;
  }
  return { responses, consumed: pos };
}

/** A request as bytes. `headers` are sent as given (order, case, duplicates); Host first unless one is given. */
export function httpRequest(
  method: string,
  target: string,
  headers: [string, string][] = [],
  body?: Buffer | string,
  opts: { version?: string; lengthHeader?: boolean; host?: string } = {},
): Buffer {
  const hs = [...headers];
  if (!hs.some(([k]) => k.toLowerCase() === 'host')) hs.unshift(['Host', opts.host ?? '127.0.0.1']);
  const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  if (b !== undefined && opts.lengthHeader !== false && !hs.some(([k]) => /^(content-length|transfer-encoding)$/i.test(k))) {
    hs.push(['Content-Length', String(b.length)]);
  }
  const head = `${method} ${target} ${opts.version ?? 'HTTP/1.1'}\r\n${hs.map(([k, v]) => `${k}: ${v}`).join('\r\n')}${hs.length ? '\r\n' : ''}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), b ?? Buffer.alloc(0)]);
}

/** A chunked body: the given pieces as chunks, then the last chunk. */
export function chunked(pieces: Buffer[]): Buffer {
  const out: Buffer[] = [];
  for (const p of pieces) out.push(Buffer.from(`${p.length.toString(16)}\r\n`, 'latin1'), p, Buffer.from('\r\n'));
  out.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(out);
}

/** Why a response breaks the error contract, or undefined when it keeps it. */
export function errorShapeProblem(res: RawResponse, method: string): string | undefined {
  if (res.status >= 500) return `${res.status} (a 5xx)`;
  const isError = !(res.status >= 200 && res.status < 300) && res.status !== 304;
  if (!isError || method === 'HEAD') return undefined;
  if (res.body.length === 0) return `${res.status} with an empty body`;
  if (!/^application\/json\b/i.test(res.headers['content-type'] ?? '')) return `${res.status} with content-type ${res.headers['content-type'] ?? '(none)'}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body.toString('utf8'));
  } catch {
    return `${res.status} with a body that is not JSON: ${res.body.toString('latin1').slice(0, 80)}`;
  }
  const p = parsed as { error?: unknown; message?: unknown } | null;
  if (typeof p !== 'object' || p === null || typeof p.error !== 'string' || typeof p.message !== 'string') {
    return `${res.status} with a body that is not {"error","message"}: ${res.body.toString('utf8').slice(0, 80)}`;
  }
  return undefined;
}
