// https on the board: Moddable's SecureSocket (modules/crypt/securesocket: TLS 1.2) over a TCP
// socket of ours, as a StreamSocket the exchange reads like a plain one, with TCP's flow control kept.
// SecureSocket decrypts every record the TCP socket holds when it reports data, and hands the
// plaintext over in its callback, 1 KB at a time, forgetting what the callback did not read. So the
// plaintext is queued here, and while the core has HIGH_WATER_BYTES or more of it unread, the TCP
// socket's "readable" reports are held back from SecureSocket: the ciphertext stays in lwIP and the
// window closes, as on a plain connection. When the core has read the queue below the mark, the held
// report is given to SecureSocket (from a timer, never inside the core's read).
// The queue's bound: one report decrypts what the TCP socket holds (lwIP: one pbuf, about 1.4 KB; the
// virtual board's window: 5,760 bytes), which completes at most one record beyond the mark: a record
// is 16 KB, or 4 KB where the server honours max_fragment_length (http-client.ts asks for it). So the
// queue never holds more than 8 + 16 + 6 = 30 KB, within the 32 KB the board has always allowed a download.
import SecureSocket from 'securesocket';
import { Socket } from 'socket';
import Timer from 'timer';
import { concatBytes, utf8Decode } from '../../../core/bytes.ts';
import { SOCKET_READABLE, type StreamSocket } from './stream-socket.ts';

export const HIGH_WATER_BYTES = 8 * 1024;

type Report = (message: number, value?: number) => void;

interface SecureSocketLike {
  read(): number;
  read(type: typeof ArrayBuffer, count?: number): ArrayBuffer;
  write(): number;
  write(...data: (string | ArrayBuffer | Uint8Array)[]): void;
  close(): void;
  callback: Report;
}

interface RawSocketLike {
  read(): number;
  callback: Report;
}

export interface TlsOptions {
  host: string;
  port: number;
  /** SecureSocket's `secure` dictionary (protocolVersion, certificate, tls_max_fragment_length). */
  secure: Record<string, unknown>;
}

export class TlsStream implements StreamSocket {
  callback: ((message: number, value?: number) => void) | undefined;
  private readonly raw: RawSocketLike;
  private readonly tls: SecureSocketLike;
  /** SecureSocket's own handler of the TCP socket's reports. */
  private readonly deliver: Report;
  private readonly pieces: Uint8Array[] = [];
  private queued = 0;
  private withheld = false;
  private resume: Timer | undefined;
  private closed = false;

  constructor(options: TlsOptions) {
    this.raw = new Socket({ host: options.host, port: options.port }) as unknown as RawSocketLike;
    this.tls = new SecureSocket({ host: options.host, port: options.port, sock: this.raw, secure: options.secure }) as unknown as SecureSocketLike;
    this.deliver = this.raw.callback;
    this.raw.callback = (message, value) => {
      if (message === SOCKET_READABLE && this.queued >= HIGH_WATER_BYTES) {
        this.withheld = true; // left in lwIP until the core has read the queue down
        return;
      }
      this.deliver(message, value);
    };
    this.tls.callback = (message, value) => {
      if (message !== SOCKET_READABLE) return this.callback?.(message, value);
      const n = this.tls.read();
      if (n > 0) this.push(new Uint8Array(this.tls.read(ArrayBuffer, n)));
      this.callback?.(SOCKET_READABLE, this.queued);
    };
  }

  read(): number;
  read(type: typeof ArrayBuffer, until?: number | string): ArrayBuffer;
  read(type: typeof String, until?: number | string): string;
  read(type: null, count: number | string): number;
  read(type?: typeof ArrayBuffer | typeof String | null, limit?: number | string): number | ArrayBuffer | string {
    if (type === undefined) return this.queued;
    let count = this.queued;
    if (typeof limit === 'number') count = Math.min(count, limit);
    else if (typeof limit === 'string' && limit !== '') count = Math.min(count, this.through(limit.charCodeAt(0)));
    const bytes = this.take(count);
    if (type === null) return bytes.length;
    if (type === String) return utf8Decode(bytes);
    return bytes.slice().buffer;
  }

  write(): number;
  write(...data: (string | ArrayBuffer | Uint8Array)[]): void;
  write(...data: (string | ArrayBuffer | Uint8Array)[]): number | void {
    if (data.length === 0) return this.tls.write();
    this.tls.write(...data);
  }

  close(): void {
    this.closed = true;
    if (this.resume !== undefined) Timer.clear(this.resume);
    this.resume = undefined;
    this.pieces.length = 0;
    this.queued = 0;
    this.tls.close();
  }

  private push(bytes: Uint8Array): void {
    this.pieces.push(bytes);
    this.queued += bytes.length;
  }

  /** How many queued bytes up to and including the first `code`, or all of them. */
  private through(code: number): number {
    let seen = 0;
    for (const piece of this.pieces) {
      const at = piece.indexOf(code);
      if (at >= 0) return seen + at + 1;
      seen += piece.length;
    }
    return seen;
  }

  private take(count: number): Uint8Array {
    const parts: Uint8Array[] = [];
    let left = count;
    while (left > 0 && this.pieces.length > 0) {
      const first = this.pieces[0]!;
      if (first.length <= left) {
        parts.push(first);
        this.pieces.shift();
        left -= first.length;
      } else {
        parts.push(first.subarray(0, left));
        this.pieces[0] = first.subarray(left);
        left = 0;
      }
    }
    this.queued -= count - left;
    if (this.withheld && this.queued < HIGH_WATER_BYTES && this.resume === undefined) {
      this.resume = Timer.set(() => {
        this.resume = undefined;
        if (this.closed || this.queued >= HIGH_WATER_BYTES) return;
        this.withheld = false;
        let available: number;
        try {
          available = this.raw.read();
        } catch {
          return; // SecureSocket closed it (an error it has reported)
        }
        this.deliver(SOCKET_READABLE, available);
      }, 0);
    }
    return parts.length === 1 ? parts[0]! : concatBytes(...parts);
  }
}
