// The part of the Web Serial API (WICG Serial API, SerialPort) that esptool-js's Transport uses:
// open, close, readable, writable, setSignals, getInfo, and its optional in-place setBaudRate. Our
// adapters fill it in over node-serialport (a local port or a pseudo-terminal) and over RFC 2217, so
// that unmodified esptool-js runs in Node (DESIGN.md section 7: esptool-js behind our own narrow
// transport).

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

/** A port whose lines cannot be driven (a pseudo-terminal): reset it with the bench's boot control instead. */
export class NoModemLinesError extends Error {
  override name = 'NoModemLinesError';
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
