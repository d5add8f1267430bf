// One connection on a board's listener (http-server.ts accepts it), served on the socket itself from
// its first byte: the request line and the head line by line (http-head.ts: 8 KB in all, a line at
// most headerLineBytes, every byte taken from the board's request memory first), the body pulled as
// the core reads it (http-body.ts), the response written as the socket has room (http-response.ts).
// Why not the SDK's `http` Server: http.js calls `prepareResponse` synchronously the moment a request
// is complete and `responseFragment` must return data synchronously, while the core answers
// asynchronously (a cloud push takes seconds); and it reads a request line of any length into memory.
// A client that stops sending gets 408, one that stops reading is dropped after 30 s without
// progress; neither holds anything but its own connection and what it was charged, and the board
// never waits on either (docs/board-http-limits.md).
import Timer from 'timer';
import type { HttpHandler, HttpRequest, HttpResponse, Iface, RequestMemory } from '../../../hal/network.ts';
import { PulledBody } from './http-body.ts';
import { HeadError, HeadReader } from './http-head.ts';
import type { ListenerLimits } from './http-limits.ts';
import { SocketWriter, writeResponse } from './http-response.ts';
import { CONTINUE_LINE, HttpRefusal, parseTarget, refusalResponse } from './http-text.ts';
import { SOCKET_READABLE, SOCKET_WRITABLE, type StreamSocket } from './stream-socket.ts';

/** An accepted connection: a stream that also tells its peer's address (xs_socket_get "REMOTE_IP"). */
export interface ConnectionSocket extends StreamSocket {
  get(what: 'REMOTE_IP'): string | undefined;
}

/**
 * What a connection costs the chunk heap before it has read a byte (its socket record's host object,
 * this object, its timer, its writer; measured: docs/board-http-limits.md), taken from the request
 * memory at accept.
 */
export const CONNECTION_BYTES = 512;

export interface ConnectionOptions {
  handler: HttpHandler;
  limits: ListenerLimits;
  /** The board's request memory, shared by every interface (the core's RequestBudget). */
  memory: RequestMemory;
  /** The associated station that leased `address` (SoftAP only). */
  stationMacOf?: (address: string) => string | undefined;
  /** Answer this without reading the request (e.g. 503 board_busy). */
  refusal?: HttpRefusal;
  done: () => void;
}

type Phase = 'line' | 'head' | 'body' | 'respond' | 'linger' | 'closed';

/** A request line's method, spaces and version beside its target ("PROPPATCH " + " HTTP/1.1\r\n"). */
const REQUEST_LINE_EXTRA = 32;

const busy = (message: string) => new HttpRefusal(503, 'board_busy', message, { 'retry-after': '1' });

export class HttpConnection {
  private phase: Phase = 'line';
  private method = '';
  private target = '';
  private readonly headers: Record<string, string> = {};
  private readonly head: HeadReader;
  private body: PulledBody | undefined;
  private readonly writer: SocketWriter;
  private timer: Timer | undefined;
  /** Bytes taken from the request memory, given back at the close. */
  private charged = 0;

  constructor(
    private readonly socket: ConnectionSocket,
    private readonly iface: Iface,
    private readonly options: ConnectionOptions,
  ) {
    const { limits, memory } = options;
    this.head = new HeadReader(socket, limits.headBytes, (n) => {
      if (!memory.take(n)) return false;
      this.charged += n;
      return true;
    });
    // A response that makes no progress for idleMs: the client stopped reading.
    this.writer = new SocketWriter(socket, (waiting) => (waiting ? this.arm(limits.idleMs, () => this.close()) : this.disarm()));
  }

  start(): void {
    this.socket.callback = (message) => this.onSocket(message);
    const { limits, memory, refusal } = this.options;
    if (refusal) return this.refuse(refusal);
    if (!memory.take(CONNECTION_BYTES)) return this.refuse(busy('The board holds as many requests as it can'));
    this.charged += CONNECTION_BYTES;
    this.arm(limits.headTimeoutMs, () => this.refuse(new HttpRefusal(408, 'request_timeout', 'The request head did not arrive in time')));
    this.readHead(); // bytes may be here already
  }

  private onSocket(message: number): void {
    if (message < 0) return this.close();
    if (message === SOCKET_WRITABLE) return this.phase === 'linger' ? this.close() : this.writer.writable();
    if (message !== SOCKET_READABLE) return;
    if (this.phase === 'line' || this.phase === 'head') this.readHead();
    else if (this.phase === 'body') this.body?.readable();
    else this.body?.discard();
  }

  private readHead(): void {
    const limits = this.options.limits;
    for (;;) {
      let line: string | undefined;
      try {
        // The request line may be as long as its target allows; a header line, headerLineBytes.
        line = this.head.line(this.phase === 'line' ? limits.targetBytes + REQUEST_LINE_EXTRA : limits.headerLineBytes);
      } catch (err) {
        return this.refuse(headRefusal(err, this.phase, limits));
      }
      if (line === undefined) return;
      if (this.phase === 'line') {
        if (line === '') continue; // RFC 9112 section 2.2: an empty line before the request line is ignored
        const request = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.[01]$/.exec(line);
        if (!request) return this.refuse(new HttpRefusal(400, 'bad_request', 'The request line is not "METHOD target HTTP/1.1"'));
        this.method = request[1]!;
        this.target = request[2]!;
        if (this.target.length > limits.targetBytes) return this.refuse(new HttpRefusal(414, 'uri_too_long', `The request target exceeds ${limits.targetBytes} bytes`));
        this.phase = 'head';
        continue;
      }
      if (line === '') return this.begin();
      const colon = line.indexOf(':');
      if (colon <= 0 || /\s/.test(line.charAt(colon - 1))) return this.refuse(new HttpRefusal(400, 'bad_request', 'A request header line is malformed'));
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
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
      await writeResponse(this.writer, response, this.method || 'GET');
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
    this.options.memory.give(this.charged);
    this.charged = 0;
    this.options.done();
  }
}

/** What a head that cannot be read is answered: never a throw (in a socket's callback, an abort). */
function headRefusal(err: unknown, phase: Phase, limits: ListenerLimits): HttpRefusal {
  if (!(err instanceof HeadError)) return new HttpRefusal(400, 'bad_request', 'The request head cannot be read');
  switch (err.fault) {
    case 'line_too_long':
      if (phase === 'line') return new HttpRefusal(414, 'uri_too_long', `The request target exceeds ${limits.targetBytes} bytes`);
      return new HttpRefusal(431, 'headers_too_large', `A request header line exceeds ${limits.headerLineBytes} bytes`);
    case 'too_large':
      return new HttpRefusal(431, 'headers_too_large', `The request head exceeds ${limits.headBytes} bytes`);
    case 'nul':
      return new HttpRefusal(400, 'bad_request', 'A request head line holds a NUL byte');
    case 'no_memory':
      return busy('The board holds as many requests as it can');
  }
}
