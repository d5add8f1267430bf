/// <reference path="../types/http-detach.d.ts" />
// One request on a board's listener, after http-server.ts has detached it from Moddable's `http`
// Server at its status line. Why detach: http.js calls `prepareResponse` synchronously the moment a
// request is complete, and `responseFragment` must return data synchronously, while the core answers
// asynchronously (a cloud push takes seconds). So the rest is served on the socket itself: the head
// line by line (8 KB, 10 s), the body pulled as the core reads it (http-body.ts), the response
// written as the socket has room (http-response.ts). A client that stops sending gets 408 after 15 s,
// one that stops reading is dropped after 30 s without progress; neither holds anything but its own
// connection, and the board never waits on either (docs/board-http-limits.md).
import type { DetachedSocket } from 'http';
import Timer from 'timer';
import type { HttpHandler, HttpRequest, HttpResponse, Iface } from '../../../hal/network.ts';
import { PulledBody } from './http-body.ts';
import type { ListenerLimits } from './http-limits.ts';
import { SocketWriter, writeResponse } from './http-response.ts';
import { CONTINUE_LINE, HttpRefusal, parseTarget, refusalResponse } from './http-text.ts';
import { SOCKET_READABLE, SOCKET_WRITABLE } from './stream-socket.ts';

export interface ConnectionOptions {
  handler: HttpHandler;
  limits: ListenerLimits;
  /** The associated station that leased `address` (SoftAP only). */
  stationMacOf?: (address: string) => string | undefined;
  /** Answer this without reading the request (e.g. 503 board_busy). */
  refusal?: HttpRefusal;
  done: () => void;
}

type Phase = 'head' | 'body' | 'respond' | 'linger' | 'closed';

export class HttpConnection {
  private phase: Phase = 'head';
  private partialLine = '';
  private headBytes = 0;
  private readonly headers: Record<string, string> = {};
  private body: PulledBody | undefined;
  private readonly writer: SocketWriter;
  private timer: Timer | undefined;

  constructor(
    private readonly socket: DetachedSocket,
    private readonly iface: Iface,
    private readonly method: string,
    private readonly target: string,
    private readonly options: ConnectionOptions,
  ) {
    // A response that makes no progress for idleMs: the client stopped reading.
    this.writer = new SocketWriter(socket, (waiting) => (waiting ? this.arm(options.limits.idleMs, () => this.close()) : this.disarm()));
  }

  start(): void {
    this.socket.callback = (message) => this.onSocket(message);
    const limits = this.options.limits;
    if (this.options.refusal) return this.refuse(this.options.refusal);
    if (this.target.length > limits.targetBytes) return this.refuse(new HttpRefusal(414, 'uri_too_long', `The request target exceeds ${limits.targetBytes} bytes`));
    this.arm(limits.headTimeoutMs, () => this.refuse(new HttpRefusal(408, 'request_timeout', 'The request head did not arrive in time')));
    this.readHead(); // http.js consumed only the status line: the headers may be here already
  }

  private onSocket(message: number): void {
    if (message < 0) return this.close();
    if (message === SOCKET_WRITABLE) return this.phase === 'linger' ? this.close() : this.writer.writable();
    if (message !== SOCKET_READABLE) return;
    if (this.phase === 'head') this.readHead();
    else if (this.phase === 'body') this.body?.readable();
    else this.body?.discard();
  }

  private readHead(): void {
    const limit = this.options.limits.headBytes;
    while (this.phase === 'head' && this.socket.read() > 0) {
      const piece = this.socket.read(String, '\n');
      this.headBytes += piece.length;
      if (this.headBytes > limit) return this.refuse(new HttpRefusal(431, 'headers_too_large', `The request head exceeds ${limit} bytes`));
      const line = this.partialLine + piece;
      this.partialLine = line.endsWith('\n') ? '' : line;
      if (this.partialLine !== '') continue;
      const text = line.replace(/\r?\n$/, '');
      if (text === '') return this.begin();
      const colon = text.indexOf(':');
      if (colon <= 0 || /\s/.test(text.charAt(colon - 1))) return this.refuse(new HttpRefusal(400, 'bad_request', 'A request header line is malformed'));
      const name = text.slice(0, colon).trim().toLowerCase();
      const value = text.slice(colon + 1).trim();
      this.headers[name] = name in this.headers ? `${this.headers[name]}, ${value}` : value;
    }
  }

  /** The head is complete: check it, then hand the request to the core. */
  private begin(): void {
    const { limits, handler, stationMacOf } = this.options;
    const headers = this.headers;
    let target: ReturnType<typeof parseTarget>;
    try {
      target = parseTarget(this.target);
    } catch (err) {
      return this.refuse(err as HttpRefusal);
    }
    const coding = headers['transfer-encoding'];
    if (coding !== undefined && coding.toLowerCase() !== 'identity') {
      return this.refuse(new HttpRefusal(411, 'length_required', 'Chunked request bodies are not taken on a board: send Content-Length'));
    }
    const declared = headers['content-length'];
    if (declared !== undefined && !/^\d{1,10}$/.test(declared)) return this.refuse(new HttpRefusal(400, 'bad_request', 'Content-Length is not a byte count'));
    const length = declared === undefined ? 0 : Number(declared);
    if (length > limits.maxBodyBytes) return this.refuse(new HttpRefusal(413, 'body_too_large', `The request body exceeds ${limits.maxBodyBytes} bytes`));
    const expect = headers['expect'];
    if (expect !== undefined && expect.toLowerCase() !== '100-continue') return this.refuse(new HttpRefusal(417, 'expectation_failed', 'Only "Expect: 100-continue" is understood'));
    if (expect !== undefined && length > 0 && this.socket.write() >= CONTINUE_LINE.length) this.socket.write(CONTINUE_LINE);

    this.phase = 'body';
    const body = new PulledBody(this.socket, length, limits.chunkBytes, () => this.disarm());
    this.body = body;
    if (length > 0) {
      const seconds = limits.bodyTimeoutMs / 1000;
      this.arm(limits.bodyTimeoutMs, () => body.fail(new HttpRefusal(408, 'body_timeout', `The request body did not arrive within ${seconds} s`)));
    } else this.disarm();
    const request: HttpRequest = { method: this.method, path: target.path, query: target.query, headers, iface: this.iface, body };
    const remote = this.iface === 'softap' ? this.socket.get('REMOTE_IP') : undefined;
    const mac = remote === undefined ? undefined : stationMacOf?.(remote);
    if (mac !== undefined) request.stationMac = mac;
    let answer: Promise<HttpResponse>;
    try {
      answer = handler(request);
    } catch (err) {
      answer = Promise.reject(err);
    }
    answer.then(
      (response) => this.respond(response),
      () => this.respond(refusalResponse(new HttpRefusal(500, 'internal_error', 'The board could not answer this request'))),
    );
  }

  /** A refusal before the core saw the request. */
  private refuse(refusal: HttpRefusal): void {
    void this.respond(refusalResponse(refusal));
  }

  private async respond(response: HttpResponse): Promise<void> {
    if (this.phase === 'respond' || this.phase === 'linger' || this.phase === 'closed') return;
    // A body that timed out is answered 408, whatever the core made of the missing bytes.
    const failure = this.body?.error;
    if (failure instanceof HttpRefusal) response = refusalResponse(failure);
    this.phase = 'respond';
    this.disarm();
    try {
      await writeResponse(this.writer, response, this.method);
    } catch {
      return this.close(); // mid-body: the client sees a short body, never a wrong one
    }
    // The connection may have ended while the last bytes went out (the client left, or stopped
    // reading): its socket is closed, and a read of it would throw out of this promise, an unhandled
    // rejection, which aborts XS (the device fuzz found it).
    if (this.closed()) return;
    // Skip what the client still sends, and close once the response is acknowledged.
    this.phase = 'linger';
    try {
      this.body?.discard();
    } catch {
      return this.close();
    }
    this.arm(this.options.limits.lingerMs, () => this.close());
  }

  /** A method, not a test of `phase` in place: TypeScript keeps its narrowing across an await. */
  private closed(): boolean {
    return this.phase === 'closed';
  }

  private arm(ms: number, then: () => void): void {
    this.disarm();
    this.timer = Timer.set(() => {
      this.timer = undefined;
      then();
    }, ms);
  }

  private disarm(): void {
    if (this.timer !== undefined) Timer.clear(this.timer);
    this.timer = undefined;
  }

  private close(): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    this.disarm();
    this.socket.callback = () => {}; // reports that race the close are ignored
    try {
      this.socket.close();
    } catch {
      /* the peer closed it first */
    }
    this.body?.fail(new HttpRefusal(400, 'incomplete_request', 'The client closed the connection before the whole body arrived'));
    this.writer.abort();
    this.options.done();
  }
}
