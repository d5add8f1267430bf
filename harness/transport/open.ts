// One factory picks the transport for a port name: rfc2217://host:port is an RFC 2217 client,
// anything else a local port through node-serialport. Imported lazily so that tools which never open
// a port do not load the serial bindings.
import type { SerialTransport } from './transport.ts';

export function isRfc2217(port: string): boolean {
  return port.startsWith('rfc2217://');
}

export async function createTransport(port: string): Promise<SerialTransport> {
  if (isRfc2217(port)) {
    const { Rfc2217Transport } = await import('./rfc2217.ts');
    return new Rfc2217Transport(port);
  }
  const { SerialPortTransport } = await import('./serial.ts');
  return new SerialPortTransport(port);
}

/** Opens a port at a rate; the caller disconnects it. */
export async function openTransport(port: string, baudRate: number): Promise<SerialTransport> {
  const t = await createTransport(port);
  await t.connect(baudRate);
  return t;
}
