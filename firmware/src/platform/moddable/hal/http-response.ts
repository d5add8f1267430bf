// Writing on a socket: a response on a listener's connection (http-connection.ts), a request the board
// sends (http-exchange.ts). As much as the socket has room for (`write()` with no argument answers
// tcp_sndbuf; a larger write throws in modSocket.c), then the next "writable" report (lwIP's sent
// callback) for more. The head carries the content-length, the body streams from the core's reader
// chunk by chunk: a 512 KB backup never sits in memory.
import { concatBytes } from '../../../core/bytes.ts';
import type { HttpResponse } from '../../../hal/network.ts';
import { HttpRefusal, refusalResponse, responseHead } from './http-text.ts';
import type { StreamSocket } from './stream-socket.ts';

/** A response at most this long is written in one piece (less than a TCP segment). */
const SMALL_RESPONSE_BYTES = 1024;

export class SocketWriter {
  private waiter: (() => void) | undefined;
  private aborted = false;

  constructor(
    private readonly socket: StreamSocket,
    /** Called when the writer starts waiting for room, and with false when it has it again. */
    private readonly stalled: (waiting: boolean) => void,
  ) {}

  async write(bytes: Uint8Array): Promise<void> {
    for (let at = 0; at < bytes.length; ) {
      if (this.aborted) throw new Error('connection closed');
      const free = this.socket.write();
      if (free <= 0) {
        this.stalled(true);
        await new Promise<void>((resolve) => (this.waiter = resolve));
        this.stalled(false);
        continue;
      }
      const n = Math.min(free, bytes.length - at);
      this.socket.write(bytes.subarray(at, at + n));
      at += n;
    }
  }

  /** The socket reported room. */
  writable(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  abort(): void {
    this.aborted = true;
    this.writable();
  }
}

/** Writes a whole response; throws when the body breaks its content-length (the connection is then cut). */
export async function writeResponse(writer: SocketWriter, response: HttpResponse, method: string): Promise<void> {
  const headers = { ...response.headers };
  const lengthName = Object.keys(headers).find((name) => name.toLowerCase() === 'content-length') ?? 'content-length';
  const { body, status } = response;
  const noBodyStatus = status === 204 || status === 304;
  if (body instanceof Uint8Array) headers[lengthName] = String(body.length);
  else if (body === undefined && !noBodyStatus) headers[lengthName] ??= '0';
  else if (body !== undefined && !/^\d+$/.test(headers[lengthName] ?? '')) {
    // A programming error in a handler, caught before anything was written.
    return writeResponse(writer, refusalResponse(new HttpRefusal(500, 'internal_error', 'A streamed response needs its content-length')), method);
  }
  const head = responseHead(status, headers);
  if (method === 'HEAD' || noBodyStatus || body === undefined) return writer.write(head);
  // A small answer (every refusal, a JSON answer) in one write, so that it goes out whole: the
  // connection may end between two writes (a client that half-closed its side as it sent its request is
  // reported gone once its bytes are read), and a head without its body promised bytes that never came.
  if (body instanceof Uint8Array && head.length + body.length <= SMALL_RESPONSE_BYTES) return writer.write(concatBytes(head, body));
  await writer.write(head);
  if (body instanceof Uint8Array) return writer.write(body);
  const declared = Number(headers[lengthName]);
  let sent = 0;
  for (let chunk = await body.read(); chunk !== null; chunk = await body.read()) {
    sent += chunk.length;
    if (sent > declared) throw new Error(`the response body exceeds its content-length ${declared}`);
    await writer.write(chunk);
  }
  if (sent !== declared) throw new Error(`the response body ended at ${sent} of ${declared} bytes`);
}
