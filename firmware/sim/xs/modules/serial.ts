// `embedded:io/serial` (ECMA-419 Serial, modules/io/serial/esp32/serial.c): new Serial({port,
// transmit, receive, baud, format: "buffer", onReadable(count), onWritable(count)}). `write` copies
// into the 128-byte TX FIFO and throws when the bytes do not fit; onWritable reports room again.
// `read(count?)` answers received bytes (an ArrayBuffer) or undefined. The UART's far end is the
// board's console on the host (pseudo-terminal, RFC 2217); the FIFO drains at once (no baud timing).
import { arrayBufferOf, bytesOf, hostCall, onEvent } from '../host.ts';

const TX_FIFO_BYTES = 128;
const ports = new Map<number, Serial>();

onEvent('serial', (event, payload) => {
  ports.get(event.port as number)?._received(payload);
});

export default class Serial {
  readonly #port: number;
  readonly #onReadable: ((count: number) => void) | undefined;
  readonly #onWritable: ((count: number) => void) | undefined;
  #rx: Uint8Array[] = [];
  #room = TX_FIFO_BYTES;
  #draining = false;

  constructor(options: { port?: number; transmit?: number; receive?: number; baud?: number; format?: string; onReadable?: (count: number) => void; onWritable?: (count: number) => void }) {
    const port = options.port ?? 0;
    if (!Number.isInteger(port) || port < 0 || port > 2) throw new RangeError('invalid port');
    if (ports.has(port)) throw new Error('in use');
    if (options.format !== undefined && options.format !== 'buffer') throw new RangeError('the emulation supports format "buffer" only'); //@@
    this.#port = port;
    this.#onReadable = options.onReadable;
    this.#onWritable = options.onWritable;
    ports.set(port, this);
  }

  read(count?: number): ArrayBuffer | undefined {
    const all = this.#rx.reduce((n, c) => n + c.length, 0);
    if (all === 0) return undefined;
    const n = Math.min(all, count ?? all);
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const head = this.#rx[0]!;
      const take = Math.min(head.length, n - at);
      out.set(head.subarray(0, take), at);
      at += take;
      if (take === head.length) this.#rx.shift();
      else this.#rx[0] = head.subarray(take);
    }
    return arrayBufferOf(out);
  }

  write(data: ArrayBuffer | ArrayBufferView): void {
    const bytes = bytesOf(data);
    if (bytes.length > this.#room) throw new Error('output full');
    this.#room -= bytes.length;
    hostCall('serial.write', { port: this.#port }, bytes);
    this.#drain();
  }

  close(): void {
    ports.delete(this.#port);
  }

  /** The FIFO empties onto the wire; room is reported in the promise jobs after this write. */
  #drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    Promise.resolve().then(() => {
      this.#draining = false;
      this.#room = TX_FIFO_BYTES;
      this.#onWritable?.(TX_FIFO_BYTES);
    });
  }

  _received(bytes: Uint8Array): void {
    this.#rx.push(bytes.slice());
    this.#onReadable?.(bytes.length);
  }
}
