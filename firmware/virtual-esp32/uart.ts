// One direction of a virtual chip's UART, paced at its baud rate: a byte takes 10 bit times
// (8N1: start, 8 data bits, stop), so n bytes are delivered no sooner than n × 10 / baud seconds
// after the line became free. The rate of the bytes already queued is the rate they were sent at:
// a baud change applies to what is sent after it (CHANGE_BAUDRATE is answered at the old rate).
const BITS_PER_BYTE = 10;

export class PacedLine {
  private readonly queue: { at: number; bytes: Uint8Array }[] = [];
  private busyUntil = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deliver: (bytes: Uint8Array) => void,
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
    this.queue.push({ at: this.busyUntil, bytes });
    this.schedule();
  }

  private schedule(): void {
    if (this.timer || this.queue.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const now = performance.now();
      while (this.queue.length > 0 && this.queue[0]!.at <= now + 0.5) this.deliver(this.queue.shift()!.bytes);
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
