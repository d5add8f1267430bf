// The part of the Web Serial API (WICG Serial API, SerialPort) that esptool-js's Transport uses:
// open, close, readable, writable, setSignals, getInfo, and its optional in-place setBaudRate,
// filled in over our own narrow transport (harness/transport/: node-serialport, RFC 2217), so that
// unmodified esptool-js runs in Node (DESIGN.md section 7: esptool-js behind our own narrow
// transport).
import type { SerialTransport } from '../transport/transport.ts';

export { NoModemLinesError } from '../transport/transport.ts';

export interface SerialSignals {
  dataTerminalReady?: boolean;
  requestToSend?: boolean;
  break?: boolean;
}

export interface WebSerialPortLike {
  readable: ReadableStream<Uint8Array> | null;
  writable: WritableStream<Uint8Array> | null;
  open(options: { baudRate: number }): Promise<void>;
  close(): Promise<void>;
  setSignals(signals: SerialSignals): Promise<void>;
  /** esptool-js changes the host's rate in place when the port offers this (no close and reopen). */
  setBaudRate(baudRate: number): Promise<void>;
  getInfo(): { usbVendorId?: number; usbProductId?: number };
}

/** A readable stream fed by `subscribe` until the port closes; cancel() stops delivery. */
export function byteStream(subscribe: (push: (bytes: Uint8Array) => void, end: () => void) => () => void): ReadableStream<Uint8Array> {
  let unsubscribe = () => undefined as void;
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      unsubscribe = subscribe(
        (bytes) => open && controller.enqueue(bytes),
        () => {
          if (!open) return;
          open = false;
          controller.close();
        },
      );
    },
    cancel() {
      open = false;
      unsubscribe();
    },
  });
}

/**
 * A transport in the Web Serial shape. When the transport is already connected at open() (the
 * caller lent it, e.g. `fleet flash` keeps the port to read the boot line after the reset), open()
 * only sets the rate and close() leaves it connected.
 */
export class WebSerialAdapter implements WebSerialPortLike {
  readable: ReadableStream<Uint8Array> | null = null;
  writable: WritableStream<Uint8Array> | null = null;
  private lent = false;

  constructor(readonly transport: SerialTransport) {}

  getInfo(): { usbVendorId?: number; usbProductId?: number } {
    const usb = this.transport.usb;
    return usb ? { usbVendorId: usb.vendorId, usbProductId: usb.productId } : {};
  }

  async open(options: { baudRate: number }): Promise<void> {
    const t = this.transport;
    this.lent = t.connected;
    if (this.lent) await t.setBaudRate(options.baudRate);
    else await t.connect(options.baudRate);
    this.readable = byteStream((push, end) => {
      const stopReading = t.read(push);
      const stopWatching = t.onClose(end);
      return () => {
        stopReading();
        stopWatching();
      };
    });
    this.writable = new WritableStream<Uint8Array>({ write: (chunk) => t.write(chunk) });
  }

  async close(): Promise<void> {
    this.readable = null;
    this.writable = null;
    if (!this.lent) await this.transport.disconnect();
  }

  /** DTR first, then RTS (as esptool-js's own setSignals order), each done before the next. */
  async setSignals(signals: SerialSignals): Promise<void> {
    if (signals.dataTerminalReady !== undefined) await this.transport.setDTR(signals.dataTerminalReady);
    if (signals.requestToSend !== undefined) await this.transport.setRTS(signals.requestToSend);
  }

  setBaudRate(baudRate: number): Promise<void> {
    return this.transport.setBaudRate(baudRate);
  }
}
