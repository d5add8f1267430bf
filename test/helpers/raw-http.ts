// HTTP over a raw TCP socket, for requests no HTTP client will send: malformed request lines, bad
// chunk sizes, bodies cut short, slow senders.
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  json: any;
}

/** Parses one HTTP/1.1 response from the bytes a socket gave; null while it is incomplete. */
export function parseRawResponse(bytes: Buffer): RawAnswer | null {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const lines = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  let start = 0;
  // Skip interim 1xx answers (100 Continue).
  while (/^HTTP\/1\.[01] 1\d\d/.test(lines[start] ?? '')) {
    start++;
    while (start < lines.length && lines[start] !== '') start++;
    start++;
  }
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[start] ?? '')?.[1]);
  if (!status) return null;
  const headers: Record<string, string> = {};
  for (const l of lines.slice(start + 1)) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = bytes.subarray(headEnd + 4);
  if (body.length < length) return null;
  const text = body.subarray(0, length);
  let json: any;
  try {
    json = JSON.parse(text.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status, headers, body: text, json };
}

export interface RawExchange {
  socket: Socket;
  /** Resolves with the response once whole, or null when the server closed without one. */
  answer: Promise<RawAnswer | null>;
}

/** Opens a socket to `url`'s host and port and writes `bytes`; `end` sends FIN afterwards. */
export function rawRequest(url: string, bytes: string | Buffer, o: { end?: boolean; timeoutMs?: number } = {}): RawExchange {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  const chunks: Buffer[] = [];
  const answer = new Promise<RawAnswer | null>((resolve) => {
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(parseRawResponse(Buffer.concat(chunks)));
    }, o.timeoutMs ?? 20_000);
    const finish = () => {
      clearTimeout(timer);
      resolve(parseRawResponse(Buffer.concat(chunks)));
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (parseRawResponse(Buffer.concat(chunks))) {
        finish();
        socket.destroy();
      }
    });
    socket.on('close', finish);
    socket.on('error', () => undefined);
  });
  socket.write(bytes);
  if (o.end) socket.end();
  return { socket, answer };
}
