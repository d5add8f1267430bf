// The SerialConsole HAL on a UART (ECMA-419 `embedded:io/serial`, modules/io/serial/esp32/serial.c;
// 115200 8N1 on UART0 by default: the USB-UART bridge of an ESP32-S3-DevKitC; protocol in
// docs/serial-console.md). serial.c writes straight into the 128-byte TX FIFO and throws
// "output full" when a write does not fit, so lines are queued and written as `onWritable` reports
// room; the queue is bounded (a console nobody reads must not exhaust the heap: the oldest lines go,
// and a line says how many). When the UART is taken (an xsbug build, `mcconfig -d`, talks to xsbug on
// UART0) output falls back to trace(), and the console has no input.
import Serial from 'embedded:io/serial';
import { utf8Decode, utf8Encode } from '../../../core/bytes.ts';
import type { SerialConsole } from '../../../hal/output.ts';
import type { ConsolePort } from './board-config.ts';

/** SOC_UART_FIFO_LEN on the ESP32-S3: the room a fresh FIFO has. */
const TX_FIFO_BYTES = 128;
const MAX_QUEUED_BYTES = 16 * 1024;
/** The longest command is "cloud <URL of up to 512 characters>" (core/api.ts takes no longer URL). */
const MAX_LINE_BYTES = 640;

export class UartConsole implements SerialConsole {
  private readonly serial: Serial | undefined;
  private readonly handlers: ((line: string) => void)[] = [];
  private readonly queue: Uint8Array[] = [];
  private queued = 0;
  private dropped = 0;
  private room = TX_FIFO_BYTES;
  /** The line being received; a typed array, as a plain array would cost a slot per byte in XS. */
  private readonly partial = new Uint8Array(MAX_LINE_BYTES);
  private partialLength = 0;

  constructor(port: ConsolePort) {
    try {
      this.serial = new Serial({
        port: port.port,
        transmit: port.transmit,
        receive: port.receive,
        baud: port.baud,
        ...(port.device ? { device: port.device } : {}),
        format: 'buffer',
        onReadable: (count) => this.received(count),
        onWritable: (count) => {
          this.room = count;
          this.flush();
        },
      });
    } catch (err) {
      this.serial = undefined;
      trace(`console: UART${port.port} unavailable (${err instanceof Error ? err.message : String(err)}): output to trace only\n`);
    }
  }

  writeLine(line: string): void {
    if (!this.serial) return trace(`${line}\n`);
    const bytes = utf8Encode(`${line}\n`);
    this.queue.push(bytes);
    this.queued += bytes.length;
    while (this.queued > MAX_QUEUED_BYTES && this.queue.length > 1) {
      this.queued -= this.queue.shift()!.length;
      this.dropped++;
    }
    this.flush();
  }

  onLine(handler: (line: string) => void): void {
    this.handlers.push(handler);
  }

  private flush(): void {
    const serial = this.serial;
    if (!serial) return;
    if (this.dropped > 0 && this.queue.length > 0) {
      const note = utf8Encode(`LOG WARNING board: console output overflowed, ${this.dropped} lines dropped\n`);
      this.dropped = 0;
      this.queue.unshift(note);
      this.queued += note.length;
    }
    while (this.room > 0 && this.queue.length > 0) {
      const head = this.queue[0]!;
      const n = Math.min(this.room, head.length);
      try {
        serial.write(head.subarray(0, n));
      } catch {
        this.room = 0; // the FIFO was fuller than counted: wait for onWritable
        return;
      }
      this.room -= n;
      this.queued -= n;
      if (n === head.length) this.queue.shift();
      else this.queue[0] = head.subarray(n);
    }
  }

  private received(count: number): void {
    const data = this.serial?.read(count);
    if (!data) return;
    for (const byte of new Uint8Array(data)) {
      if (byte !== 0x0a) {
        if (this.partialLength < MAX_LINE_BYTES) this.partial[this.partialLength++] = byte;
        continue;
      }
      const bytes = this.partial.slice(0, this.partialLength);
      this.partialLength = 0;
      let line: string;
      try {
        line = utf8Decode(bytes).replace(/\r$/, '');
      } catch {
        continue; // not UTF-8: line noise, not a command
      }
      for (const handler of this.handlers) handler(line);
    }
  }
}
