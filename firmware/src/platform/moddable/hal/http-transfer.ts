// The two buffers between Moddable's synchronous `http` Request callbacks and the core's
// asynchronous BodyReaders (http-client.ts explains the protocol).
import type { BodyReader } from '../../../hal/network.ts';

/** Upload: one chunk read ahead, handed out as the socket has room. */
export class UploadPump {
  private ready: Uint8Array | undefined;
  private offset = 0;
  private sent = 0;
  private reading = false;
  private ended = false;
  private failure: Error | undefined;

  constructor(
    private readonly reader: BodyReader,
    private readonly length: number,
  ) {
    this.fetch();
  }

  /** The next piece (at most `room` bytes), an empty buffer when none is ready yet, undefined at the end. */
  next(room: number, fail: (err: Error) => void): ArrayBuffer | undefined {
    if (this.failure) return void fail(this.failure);
    if (this.sent >= this.length) return undefined;
    if (!this.ready) {
      if (this.ended) return void fail(new Error(`the upload ended at ${this.sent} of ${this.length} bytes`));
      this.fetch();
      return new ArrayBuffer(0);
    }
    const n = Math.min(room, this.ready.length - this.offset, this.length - this.sent);
    const piece = this.ready.slice(this.offset, this.offset + n).buffer;
    this.offset += n;
    this.sent += n;
    if (this.offset >= this.ready.length) {
      this.ready = undefined;
      this.fetch();
    }
    return piece;
  }

  private fetch(): void {
    if (this.reading || this.ended || this.ready || this.failure) return;
    this.reading = true;
    this.reader.read().then(
      (chunk) => {
        this.reading = false;
        if (chunk === null) this.ended = true;
        else if (chunk.length > 0) {
          this.ready = chunk;
          this.offset = 0;
        } else this.fetch();
      },
      (err: unknown) => {
        this.reading = false;
        this.failure = err instanceof Error ? err : new Error(String(err));
      },
    );
  }
}

/**
 * Download: fragments queued until the core reads them, at most `maxBytes`. A fragment is whatever
 * the socket had (over TLS a whole record, up to 16 KB): it is handed out as views of at most
 * `pieceBytes`, without copying, so that the core's work on it (GCM, flash) goes 4 KB at a time.
 */
export class DownloadQueue implements BodyReader {
  onOverflow: () => void = () => {};
  private readonly chunks: Uint8Array[] = [];
  private queued = 0;
  private ended = false;
  private failure: Error | undefined;
  private waiter: { resolve: (chunk: Uint8Array | null) => void; reject: (err: Error) => void } | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly pieceBytes = 4096,
  ) {}

  push(buffer: ArrayBuffer): void {
    if (this.failure || this.ended) return;
    for (let at = 0; at < buffer.byteLength; at += this.pieceBytes) {
      const chunk = new Uint8Array(buffer, at, Math.min(this.pieceBytes, buffer.byteLength - at));
      const waiter = this.waiter;
      this.waiter = undefined;
      if (waiter) waiter.resolve(chunk);
      else {
        this.chunks.push(chunk);
        this.queued += chunk.length;
      }
    }
    if (this.queued > this.maxBytes) this.onOverflow();
  }

  end(): void {
    this.ended = true;
    this.waiter?.resolve(null);
    this.waiter = undefined;
  }

  fail(err: Error): void {
    this.failure ??= err;
    this.chunks.length = 0;
    this.queued = 0;
    this.waiter?.reject(err);
    this.waiter = undefined;
  }

  read(): Promise<Uint8Array | null> {
    if (this.failure) return Promise.reject(this.failure);
    const chunk = this.chunks.shift();
    if (chunk) {
      this.queued -= chunk.length;
      return Promise.resolve(chunk);
    }
    if (this.ended) return Promise.resolve(null);
    if (this.waiter) return Promise.reject(new Error('one body read at a time'));
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }
}
