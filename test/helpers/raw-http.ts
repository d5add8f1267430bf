// HTTP over a raw TCP socket, for requests no HTTP client will send: malformed request lines, bad
// chunk sizes, bodies cut short, slow senders. Unlike tools/fuzz/raw-http.ts's rawExchange, the
// caller keeps the socket (to hold it open, reset it or destroy it while other requests run).
import { connect, type Socket } from 'node:net';
import { parseResponses } from '../../tools/fuzz/raw-http.ts';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  json: any;
}

/** One HTTP/1.1 response from the bytes a socket gave (JSON body parsed); null while it is incomplete. */
export function parseRawResponse(bytes: Buffer): RawAnswer | null {
  const res = parseResponses(bytes, ['GET'], false).responses[0];
  if (!res) return null;
  let json: any;
  try {
    json = JSON.parse(res.body.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { ...res, json };
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
