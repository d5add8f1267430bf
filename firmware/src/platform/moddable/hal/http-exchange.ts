// One request from the board and its response, on one connection (http-client.ts opens it). Served on
// the socket itself, as the listeners serve theirs (http-connection.ts), never through the `http`
// Request: its `responseFragment` hands over whatever arrived and forgets what the callback did not
// read (a chunked body), so a core slower than the network had either to queue without bound or to
// fail. Here:
// - the head and the body go out as the socket has room (SocketWriter), the body read from the core's
//   reader chunk by chunk, however slowly it produces them;
// - the response head is read line by line (http-head.ts: at most MAX_HEAD_BYTES), then the body is
//   pulled as the core reads it (http-response-body.ts): the sender is slowed down by TCP, not refused;
// - the time-out is a "no progress" time-out: started again by every byte written or read, so a long
//   transfer that keeps moving is never cut, and a sender that stalls (or a core that stops reading)
//   ends the exchange after timeoutMs.
import Timer from 'timer';
import { utf8Encode } from '../../../core/bytes.ts';
import type { BodyReader, ClientResponse } from '../../../hal/network.ts';
import { SocketWriter } from './http-response.ts';
import { HeadReader } from './http-head.ts';
import { ResponseBody, type BodyFraming } from './http-response-body.ts';
import { SOCKET_CONNECTED, SOCKET_READABLE, SOCKET_WRITABLE, type StreamSocket } from './stream-socket.ts';

/** A response head (status line and headers) longer than this is refused, as the listeners refuse one. */
export const MAX_HEAD_BYTES = 8192;
/** The largest piece of a response body handed to the core at once. */
export const RESPONSE_PIECE_BYTES = 4096;

export interface Exchange {
  /** `GET http://…/backup`: how errors name the request. */
  what: string;
  method: string;
  /** The request line and headers, ending with the blank line. */
  head: string;
  body?: Uint8Array | BodyReader;
  /** The body's length as the head's content-length says (a reader must produce exactly this). */
  bodyLength: number;
  timeoutMs: number;
}

type Phase = 'connecting' | 'head' | 'body' | 'done';

export class ClientExchange {
  readonly response: Promise<ClientResponse>;
  private resolve!: (response: ClientResponse) => void;
  private reject!: (err: Error) => void;
  private phase: Phase = 'connecting';
  private readonly writer: SocketWriter;
  private timer: Timer | undefined;
  private readonly head: HeadReader;
  private status = 0;
  /** A 1xx answer's head is being skipped (RFC 9110 section 15.2). */
  private interim = false;
  private headers: Record<string, string> = {};
  private body: ResponseBody | undefined;

  constructor(
    private readonly socket: StreamSocket,
    private readonly exchange: Exchange,
  ) {
    this.response = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.writer = new SocketWriter(socket, () => this.progress());
    this.head = new HeadReader(socket, MAX_HEAD_BYTES);
    socket.callback = (message) => this.onSocket(message);
    this.progress();
  }

  private onSocket(message: number): void {
    if (this.phase === 'done') return;
    if (message === SOCKET_CONNECTED) {
      this.phase = 'head';
      this.progress();
      void this.send();
    } else if (message === SOCKET_WRITABLE) this.writer.writable();
    else if (message === SOCKET_READABLE) {
      if (this.phase === 'head') this.readHead();
      if (this.phase === 'body') this.body?.readable();
    } else if (message < 0) {
      if (this.phase === 'body') this.body?.closed();
      else this.fail(new Error(this.phase === 'connecting' ? 'connection failed' : 'the connection closed before the answer'));
    }
  }

  /** The request: its head, then its body, each as the socket has room. */
  private async send(): Promise<void> {
    const { body, bodyLength } = this.exchange;
    try {
      await this.writer.write(utf8Encode(this.exchange.head));
      if (body instanceof Uint8Array) await this.writer.write(body);
      else if (body) {
        let sent = 0;
        for (let chunk = await body.read(); chunk !== null; chunk = await body.read()) {
          sent += chunk.length;
          if (sent > bodyLength) throw new Error(`the upload is longer than its ${bodyLength} bytes`);
          await this.writer.write(chunk);
          this.progress();
        }
        if (sent !== bodyLength) throw new Error(`the upload ended at ${sent} of ${bodyLength} bytes`);
      }
    } catch (err) {
      // A server may answer before it has read the whole body (a 413): that answer stands.
      if (this.phase === 'head' || this.phase === 'connecting') this.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private readHead(): void {
    while (this.phase === 'head') {
      let text: string | undefined;
      try {
        text = this.head.line();
      } catch (err) {
        return this.fail(err as Error);
      }
      if (text === undefined) return;
      this.progress();
      if (this.status === 0 && !this.interim) {
        const status = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(text);
        if (!status) return this.fail(new Error(`not an HTTP/1.1 status line: ${JSON.stringify(text.slice(0, 40))}`));
        const code = Number(status[1]);
        if (code < 200) this.interim = true;
        else this.status = code;
      } else if (text === '') {
        if (!this.interim) return this.begin();
        this.interim = false;
      } else if (!this.interim) {
        const colon = text.indexOf(':');
        if (colon <= 0) return this.fail(new Error('a response header line is malformed'));
        const name = text.slice(0, colon).trim().toLowerCase();
        const value = text.slice(colon + 1).trim();
        this.headers[name] = name in this.headers ? `${this.headers[name]}, ${value}` : value;
      }
    }
  }

  /** The head is whole: the body's framing (RFC 9112 section 6.3), then the response to the core. */
  private begin(): void {
    let framing: BodyFraming;
    try {
      framing = framingOf(this.exchange.method, this.status, this.headers);
    } catch (err) {
      return this.fail(err as Error);
    }
    this.phase = 'body';
    const body = new ResponseBody(this.exchange.what, this.socket, framing, RESPONSE_PIECE_BYTES, () => this.progress(), () => this.finish());
    this.body = body;
    this.resolve({ status: this.status, headers: this.headers, body });
    if (framing.kind === 'length' && framing.bytes === 0) this.finish();
  }

  private progress(): void {
    if (this.phase === 'done') return;
    if (this.timer !== undefined) Timer.clear(this.timer);
    const ms = this.exchange.timeoutMs;
    this.timer = Timer.set(() => {
      this.timer = undefined;
      this.fail(new Error(`no progress for ${ms} ms`));
    }, ms);
  }

  /** The whole body was read: the connection has nothing more to give. */
  private finish(): void {
    if (this.phase === 'done') return;
    this.close();
  }

  private fail(err: Error): void {
    if (this.phase === 'done') return;
    const failure = new Error(`${this.exchange.what}: ${err.message}`);
    const answered = this.phase === 'body';
    this.close();
    if (answered) this.body?.fail(failure);
    else this.reject(failure);
  }

  private close(): void {
    this.phase = 'done';
    if (this.timer !== undefined) Timer.clear(this.timer);
    this.timer = undefined;
    this.socket.callback = () => {}; // reports that race the close are ignored
    try {
      this.socket.close();
    } catch {
      /* the peer closed it first */
    }
    this.writer.abort();
  }
}

/** RFC 9112 section 6.3: how a response's body ends. */
export function framingOf(method: string, status: number, headers: Record<string, string>): BodyFraming {
  if (method === 'HEAD' || status === 204 || status === 304) return { kind: 'length', bytes: 0 };
  const coding = headers['transfer-encoding'];
  if (coding !== undefined) {
    const codings = coding.split(',').map((c) => c.trim().toLowerCase());
    if (codings[codings.length - 1] === 'chunked') return { kind: 'chunked' };
    if (codings.some((c) => c !== 'identity')) return { kind: 'close' };
  }
  const declared = headers['content-length'];
  if (declared === undefined) return { kind: 'close' };
  // A repeated header joined with ", " (RFC 9110 section 8.6 allows identical values).
  const values = declared.split(',').map((v) => v.trim());
  if (!values.every((v) => /^\d{1,10}$/.test(v) && v === values[0])) throw new Error(`the response's content-length is not a byte count: ${JSON.stringify(declared.slice(0, 40))}`);
  return { kind: 'length', bytes: Number(values[0]) };
}
