// A request body pulled from the socket (http-connection.ts). read() takes what lwIP holds, or waits
// for the socket's next "readable" report. Data nobody asked for stays in lwIP: modSocket.c frees a
// pbuf (and widens the TCP window) only once it is read, so a fast client is slowed down by TCP
// itself and the board's memory stays bounded by the window, whatever the body's size.
import type { BodyReader } from '../../../hal/network.ts';
import type { StreamSocket } from './stream-socket.ts';

export class PulledBody implements BodyReader {
  private waiter: { resolve: (chunk: Uint8Array | null) => void; reject: (err: Error) => void } | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly socket: StreamSocket,
    private remaining: number,
    private readonly chunkBytes: number,
    /** Called once the last byte has been read. */
    private readonly onComplete: () => void,
  ) {}

  get complete(): boolean {
    return this.remaining === 0;
  }

  /** Why reading stopped (a time-out, the client leaving), if it did. */
  get error(): Error | undefined {
    return this.failure;
  }

  read(): Promise<Uint8Array | null> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.remaining === 0) return Promise.resolve(null);
    if (this.waiter) return Promise.reject(new Error('one body read at a time'));
    const chunk = this.take();
    if (chunk) return Promise.resolve(chunk);
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** The socket reported data: give it to a waiting read, or leave it in lwIP. */
  readable(): void {
    if (!this.waiter) return;
    const chunk = this.take();
    if (!chunk) return;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter.resolve(chunk);
  }

  fail(err: Error): void {
    this.failure ??= err;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(this.failure);
  }

  /** Skips what has arrived of a body the core left unread (after its response). */
  discard(): void {
    for (let n = this.socket.read(); n > 0; n = this.socket.read()) this.remaining = Math.max(0, this.remaining - this.socket.read(null, n));
  }

  private take(): Uint8Array | undefined {
    const available = this.socket.read();
    if (available <= 0) return undefined;
    const piece = this.socket.read(ArrayBuffer, Math.min(available, this.remaining, this.chunkBytes));
    this.remaining -= piece.byteLength;
    if (this.remaining === 0) this.onComplete();
    return new Uint8Array(piece);
  }
}
