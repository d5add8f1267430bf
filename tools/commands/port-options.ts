// What the board commands (flash, monitor, console) share: the port option, the reset method (from
// the USB ids when not given) and opening the transport with errors that say which port.
import { InvalidArgumentError } from 'commander';
import { isRfc2217 } from '../../harness/transport/open.ts';
import { parseResetMethod, type ResetMethod } from '../../harness/transport/reset-sequence.ts';

export function resetMethodOption(value: string): ResetMethod | 'auto' {
  if (value === 'auto') return 'auto';
  try {
    return parseResetMethod(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

export function baudOption(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 300 || n > 5_000_000) throw new InvalidArgumentError(`must be a baud rate from 300 to 5000000: ${value}`);
  return n;
}

/** auto: classic for RFC 2217 servers (a bridge behind them) and bridges; usb-jtag for Espressif's own USB. */
export async function resolveResetMethod(port: string, method: ResetMethod | 'auto'): Promise<ResetMethod> {
  if (method !== 'auto') return method;
  if (isRfc2217(port)) return 'classic';
  const { listSerialPorts } = await import('../../harness/transport/usb-ports.ts');
  const listed = (await listSerialPorts().catch(() => [])).find((p) => p.path === port);
  return listed?.resetMethod ?? 'classic';
}

export function seconds(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || n <= 0 || n > 3600) throw new InvalidArgumentError(`must be a number of seconds from 0 to 3600: ${value}`);
  return n;
}
