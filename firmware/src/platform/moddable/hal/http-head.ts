// The lines of an HTTP head (a request's on the listeners, a response's for the board's own requests),
// read off a socket as bytes up to each line's end: `read(ArrayBuffer, "\n")` stops after the
// terminator, so nothing of the body is taken with the head. A line is decoded only once it is whole,
// byte for byte (ISO-8859-1, as RFC 9110 reads a field's obs-text), so no byte makes it throw.
// What a head may hold is bounded before it is held: `limit` bytes in all, a limit per line, and
// every byte taken from `charge` before it is held (the board's request memory,
// docs/board-http-limits.md). A NUL
// byte is refused at once: RFC 9110 section 5.5 allows none in a field, and modSocket.c's line search
// (strchr) stops at one, so a head with a NUL would otherwise never end.
import { concatBytes, latin1Decode } from '../../../core/bytes.ts';
import type { StreamSocket } from './stream-socket.ts';

export type HeadFault = 'too_large' | 'line_too_long' | 'nul' | 'no_memory';

export class HeadError extends Error {
  override name = 'HeadError';
  constructor(
    readonly fault: HeadFault,
    message: string,
  ) {
    super(message);
  }
}

const LF = 10;
const CR = 13;

export class HeadReader {
  /** Bytes read so far. */
  bytes = 0;
  private readonly pieces: Uint8Array[] = [];
  private lineBytes = 0;

  constructor(
    private readonly socket: StreamSocket,
    private readonly limit: number,
    /** Takes bytes from a budget before they are held; false when they are not there. */
    private readonly charge: (bytes: number) => boolean = () => true,
  ) {}

  /** The next whole line (at most `lineLimit` bytes) without its CRLF, or undefined until more arrives. Throws HeadError. */
  line(lineLimit = this.limit): string | undefined {
    while (this.socket.read() > 0) {
      const piece = new Uint8Array(this.socket.read(ArrayBuffer, '\n'));
      this.bytes += piece.length;
      this.lineBytes += piece.length;
      if (this.bytes > this.limit) throw new HeadError('too_large', `the head exceeds ${this.limit} bytes`);
      if (this.lineBytes > lineLimit) throw new HeadError('line_too_long', `a head line exceeds ${lineLimit} bytes`);
      if (piece.includes(0)) throw new HeadError('nul', 'a head line holds a NUL byte');
      if (!this.charge(piece.length)) throw new HeadError('no_memory', 'no request memory left for the head');
      this.pieces.push(piece);
      if (piece[piece.length - 1] !== LF) continue;
      const line = this.pieces.length === 1 ? this.pieces[0]! : concatBytes(...this.pieces);
      this.pieces.length = 0;
      this.lineBytes = 0;
      const end = line.length >= 2 && line[line.length - 2] === CR ? line.length - 2 : line.length - 1;
      return latin1Decode(line.subarray(0, end)); // bytes as RFC 9110 reads a field: never an error
    }
    return undefined;
  }
}
