// One direction of a virtual chip's UART, paced at its baud rate: a byte takes 10 bit times
// (8N1: start, 8 data bits, stop), so n bytes are delivered no sooner than n × 10 / baud seconds
// after the line became free. The rate of the bytes already queued is the rate they were sent at:
// a baud change applies to what is sent after it (CHANGE_BAUDRATE is answered at the old rate).
const BITS_PER_BYTE = 10;

export class PacedLine {
  private readonly queue: { at: number; bytes: Uint8Array; baud: number }[] = [];
  private busyUntil = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** Each chunk with the rate it was sent at. */
    private readonly deliver: (bytes: Uint8Array, baud: number) => void,
    public baud: number,
  ) {}

  /** Seconds the line needs for `bytes` at `baud`: the line-rate limit a transfer is measured against. */
  static seconds(bytes: number, baud: number): number {
    return (bytes * BITS_PER_BYTE) / baud;
  }

  push(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    const now = performance.now();
    this.busyUntil = Math.max(now, this.busyUntil) + PacedLine.seconds(bytes.length, this.baud) * 1000;
    this.queue.push({ at: this.busyUntil, bytes, baud: this.baud });
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.queue.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const now = performance.now();
      while (this.queue.length > 0 && this.queue[0]!.at <= now + 0.5) {
        const { bytes, baud } = this.queue.shift()!;
        this.deliver(bytes, baud);
      }
      this.schedule();
    }, Math.max(0, this.queue[0]!.at - performance.now()));
  }

  /** Resolves once everything queued so far has been delivered. */
  async drained(): Promise<void> {
    while (this.queue.length > 0) await new Promise((r) => setTimeout(r, Math.max(1, this.queue[this.queue.length - 1]!.at - performance.now())));
  }

  /** Drops what is still on the wire (a reset, PURGE-DATA). */
  clear(): void {
    this.queue.length = 0;
    this.busyUntil = 0;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * What a UART reading at `readBaud` makes of bytes sent back to back at `sentBaud` (8N1, idle high):
 * the receiver waits for a start bit's falling edge, samples the 8 data bits and the stop bit at the
 * middle of its own bit times, and starts hunting again after the stop bit. Equal rates give the
 * bytes back; others give the garbage (and framing-error bytes) a mismatched line gives.
 */
export function resample(bytes: Uint8Array, sentBaud: number, readBaud: number): Uint8Array {
  if (sentBaud === readBaud || bytes.length === 0) return bytes;
  const bits = bytes.length * BITS_PER_BYTE;
  /** The line level at time t (in the sender's bit times). */
  const level = (t: number): number => {
    const i = Math.floor(t);
    if (i < 0 || i >= bits) return 1;
    const bit = i % BITS_PER_BYTE;
    if (bit === 0) return 0;
    if (bit === 9) return 1;
    return (bytes[Math.floor(i / BITS_PER_BYTE)]! >> (bit - 1)) & 1;
  };
  const step = sentBaud / readBaud; // one receiver bit time, in sender bit times
  // The receiver notices a level change within a sixteenth of its bit time (a UART's 16× oversampling).
  const tick = step / 16;
  const out: number[] = [];
  let t = 0;
  while (t < bits) {
    if (level(t) !== 0) {
      t += tick;
      continue;
    }
    let byte = 0;
    for (let b = 0; b < 8; b++) byte |= level(t + (b + 1.5) * step) << b;
    out.push(byte);
    t += 9.5 * step;
  }
  return Uint8Array.from(out);
}
