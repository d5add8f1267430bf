// Our narrow serial transport (DESIGN.md section 7; esptool-js issue 117 / PR 122): bytes in and
// out, the two modem lines, the line rate. Implementations only fill it in: a local port through
// node-serialport (serial.ts) and a port on an RFC 2217 access server (rfc2217.ts). esptool-js
// sees one through the Web Serial adapter (harness/flash/web-serial.ts); the console, the monitor
// and the bench's serial boards use it directly.

export interface SerialTransport {
  /** The port as the user wrote it: a path or rfc2217://host:port. */
  readonly name: string;
  /** USB ids when the port is a local USB device (node-serialport's list), for picking a reset method. */
  readonly usb?: { vendorId: number; productId: number };
  connect(baudRate: number): Promise<void>;
  disconnect(): Promise<void>;
  readonly connected: boolean;
  /** Delivers received bytes to `listener` until the returned function is called. */
  read(listener: (bytes: Uint8Array) => void): () => void;
  /** Called once when the port closes under us (the server hung up, the adapter was unplugged). */
  onClose(listener: (why: string) => void): () => void;
  write(bytes: Uint8Array): Promise<void>;
  /** DTR asserted (true) or not; on a DevKitC's auto-reset circuit DTR low-pulls IO0 while RTS is not asserted. */
  setDTR(asserted: boolean): Promise<void>;
  /** RTS asserted (true) or not; RTS asserted with DTR not holds EN low (the chip in reset). */
  setRTS(asserted: boolean): Promise<void>;
  setBaudRate(baudRate: number): Promise<void>;
  readonly baudRate: number;
  /** Drops what is buffered towards the device and from it (RFC 2217 PURGE-DATA; a local port's flush). */
  purge(): Promise<void>;
}

/** A port that could not be opened or reached: no such device, connection refused, not an RFC 2217 server. */
export class PortUnavailableError extends Error {
  override name = 'PortUnavailableError';
  readonly portUnavailable = true;
}

/**
 * A port another program holds (a serial port, like an RFC 2217 port, has one user at a time; the
 * ports stay exclusive so that two programs' bytes never interleave: docs/monitor-reset.md).
 */
export const PORT_IN_USE = 'in use by another program (a fleet monitor?): a port has one user at a time; type the command into that monitor, or quit it (Ctrl-]) and run this again';

/** Why a port could not be opened, in words a user can act on (node-serialport's and the socket's errors). */
export function portProblem(err: Error): string {
  const m = err.message.replace(/^Error: /, '');
  if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') return 'connection refused (is an RFC 2217 server listening there?)';
  if (/No such file or directory/.test(m)) return 'no such port (fleet ports lists the serial ports of this machine)';
  if (/Permission denied/.test(m)) return 'permission denied (on Linux, add your user to the dialout group and log in again)';
  if (/Is a directory|Inappropriate ioctl/.test(m)) return 'not a serial port';
  if (/Resource temporarily unavailable|Cannot lock port/.test(m)) return PORT_IN_USE;
  return m;
}

/** A port whose lines cannot be driven (a pseudo-terminal): reset the board with its boot control instead. */
export class NoModemLinesError extends Error {
  override name = 'NoModemLinesError';
  readonly noModemLines = true;
}

/** The transport was used while not connected, or closed while an operation waited. */
export class DisconnectedError extends Error {
  override name = 'DisconnectedError';
  readonly disconnected = true;
}

/** Something awaited (an answer, a line, a port) did not come within its time. */
export class TimeoutError extends Error {
  override name = 'TimeoutError';
  constructor(
    readonly awaited: string,
    readonly timeoutMs: number,
  ) {
    super(`timed out after ${timeoutMs} ms waiting for ${awaited}`);
  }
}
