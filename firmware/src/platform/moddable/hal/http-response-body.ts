// A response body the board downloads (http-exchange.ts), pulled from the socket as the core reads
// it, the way a request body is on the listeners (http-body.ts): read() takes what the socket holds,
// or waits for its next "readable" report. What the core has not asked for stays in lwIP, whose TCP
// window then closes: a sender faster than the core (a 512 KB backup from a controller on Ethernet
// while this board writes flash and decrypts, an OTA image while the flash erases) is slowed down by
// TCP itself, and the board holds no more than the window, whatever the body's size.
// Framing as RFC 9112 section 6.3 says: chunked (section 7.1: sizes, data, CRLFs, trailers), a
// Content-Length, or everything until the server closes.
import type { BodyReader } from '../../../hal/network.ts';
import type { StreamSocket } from './stream-socket.ts';

export type BodyFraming = { kind: 'length'; bytes: number } | { kind: 'chunked' } | { kind: 'close' };

/** A chunk-size or trailer line longer than this is not HTTP. */
const MAX_LINE_BYTES = 1024;

type ChunkState = 'size' | 'data' | 'crlf' | 'trailers';

export class ResponseBody implements BodyReader {
  private waiter: { resolve: (chunk: Uint8Array | null) => void; reject: (err: Error) => void } | undefined;
  private failure: Error | undefined;
  private ended = false;
  private peerClosed = false;
  /** Length framing: bytes still to come; chunked: bytes left in the current chunk. */
  private remaining: number;
  private chunkState: ChunkState = 'size';
  private line = '';

  constructor(
    /** `GET http://…/backup`: how errors name the request. */
    private readonly what: string,
    private readonly socket: StreamSocket,
    private readonly framing: BodyFraming,
    /** The largest piece handed to the core at once. */
    private readonly pieceBytes: number,
    /** Bytes were read: the exchange's no-progress time-out starts again. */
    private readonly onProgress: () => void,
    /** The last byte was read, or the body broke: the exchange closes the connection. */
    private readonly onEnd: () => void,
  ) {
    this.remaining = framing.kind === 'length' ? framing.bytes : 0;
  }

  read(): Promise<Uint8Array | null> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.waiter) return Promise.reject(new Error('one body read at a time'));
    let chunk: Uint8Array | null | undefined;
    try {
      chunk = this.take();
    } catch (err) {
      this.broke(err);
      return Promise.reject(this.failure);
    }
    if (chunk !== undefined) return Promise.resolve(chunk);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** The socket has bytes: a waiting read takes them, otherwise they stay in lwIP. */
  readable(): void {
    if (this.waiter) this.settle();
  }

  /** The server closed the connection (lwIP reports it once everything before it was read). */
  closed(): void {
    this.peerClosed = true;
    if (this.waiter) this.settle();
  }

  /** The exchange ended it (a time-out): reads from now on reject with `err`. */
  fail(err: Error): void {
    if (this.ended) return;
    this.failure ??= err;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(this.failure);
  }

  /** The body itself is broken (cut short, a bad chunk): the read fails, the connection closes. */
  private broke(err: unknown): void {
    this.fail(new Error(`${this.what}: ${err instanceof Error ? err.message : String(err)}`));
    this.onEnd();
  }

  private settle(): void {
    const waiter = this.waiter!;
    let chunk: Uint8Array | null | undefined;
    try {
      chunk = this.take();
    } catch (err) {
      return this.broke(err);
    }
    if (chunk === undefined) return;
    this.waiter = undefined;
    waiter.resolve(chunk);
  }

  /** What the socket can be read for now: 0 once the connection is gone. */
  private available(): number {
    if (this.peerClosed) {
      try {
        return this.socket.read();
      } catch {
        return 0; // modSocket.c: "read on closed socket"
      }
    }
    return this.socket.read();
  }

  /** The next piece, null at the end, undefined when the socket has nothing yet; throws on a broken body. */
  private take(): Uint8Array | null | undefined {
    for (;;) {
      if (this.ended) return null;
      if (this.framing.kind === 'length' && this.remaining === 0) return this.end();
      const available = this.available();
      if (available <= 0) {
        if (!this.peerClosed) return undefined;
        if (this.framing.kind === 'close') return this.end();
        throw new Error(this.framing.kind === 'length' ? `the connection closed ${this.remaining} bytes before the end of the body` : 'the connection closed inside a chunked body');
      }
      if (this.framing.kind !== 'chunked' || this.chunkState === 'data') return this.piece(available);
      const line = this.readLine();
      if (line === undefined) continue;
      if (this.chunkState === 'size') {
        const size = /^([0-9A-Fa-f]{1,8})[ \t]*(?:;.*)?$/.exec(line);
        if (!size) throw new Error(`not a chunk size: ${JSON.stringify(line.slice(0, 40))}`);
        this.remaining = parseInt(size[1]!, 16);
        this.chunkState = this.remaining === 0 ? 'trailers' : 'data';
      } else if (this.chunkState === 'crlf') {
        if (line !== '') throw new Error('a chunk is longer than its size');
        this.chunkState = 'size';
      } else if (line === '') return this.end(); // the blank line after the trailers
    }
  }

  private piece(available: number): Uint8Array {
    const limit = this.framing.kind === 'close' ? available : Math.min(available, this.remaining);
    const bytes = new Uint8Array(this.socket.read(ArrayBuffer, Math.min(limit, this.pieceBytes)));
    if (this.framing.kind !== 'close') this.remaining -= bytes.length;
    if (this.framing.kind === 'chunked' && this.remaining === 0) this.chunkState = 'crlf';
    this.onProgress();
    if (this.framing.kind === 'length' && this.remaining === 0) this.end(); // the connection closes now, not at the next read
    return bytes;
  }

  /** A whole line without its CRLF, or undefined while it is still arriving. */
  private readLine(): string | undefined {
    const piece = this.socket.read(String, '\n');
    this.onProgress();
    const line = this.line + piece;
    if (line.length > MAX_LINE_BYTES) throw new Error(`a chunked body line exceeds ${MAX_LINE_BYTES} bytes`);
    if (!line.endsWith('\n')) {
      this.line = line;
      return undefined;
    }
    this.line = '';
    return line.replace(/\r?\n$/, '');
  }

  private end(): null {
    this.ended = true;
    this.onEnd();
    return null;
  }
}
