// What the board commands (flash, monitor, console) share: the port option, the reset method (from
// the USB ids when not given) and opening the transport with errors that say which port.
// As esptool and idf.py users expect: `-p/--port` or ESPPORT; `-b/--baud` or ESPBAUD for flashing,
// MONITORBAUD for the console (idf.py's names: ESPBAUD is the flashing rate, often 460800 or more,
// which a console at 115200 would not read). With no port given, the only serial port of the
// machine is used; when there are several, they are listed and the user picks one.
import { InvalidArgumentError, Option } from 'commander';
import { isRfc2217 } from '../../harness/transport/open.ts';
import { parseResetMethod, type ResetMethod } from '../../harness/transport/reset-sequence.ts';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';

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

/** -p/--port, from ESPPORT when not given. */
export function portFlag(): Option {
  return new Option('-p, --port <port>', 'serial port path or rfc2217://host:port (default: the only serial port of this machine)').env('ESPPORT');
}

/** -b/--baud with its default and environment variable (ESPBAUD for flashing, MONITORBAUD for the console). */
export function baudFlag(description: string, defaultBaud: number, env: 'ESPBAUD' | 'MONITORBAUD'): Option {
  return new Option('-b, --baud <rate>', description).env(env).default(defaultBaud).argParser(baudOption);
}

/** No port given and not exactly one to pick: a usage error (exit 2) that lists what there is. */
export class PortChoiceError extends Error {
  override name = 'PortChoiceError';
  readonly exitCode = EXIT_CODES.usage;
}

type PortList = () => Promise<import('../../harness/transport/usb-ports.ts').SerialPortInfo[]>;

/** The port to open: the one given (-p or ESPPORT), else the machine's only serial port. */
export async function resolvePort(given: string | undefined, say: (line: string) => void, list?: PortList): Promise<string> {
  if (given) return given;
  const { listSerialPorts, formatPort } = await import('../../harness/transport/usb-ports.ts');
  const ports = await (list ?? listSerialPorts)();
  if (ports.length === 1) {
    say(`using ${ports[0]!.path}, the only serial port (give another with -p or ESPPORT)`);
    return ports[0]!.path;
  }
  if (ports.length === 0) throw new PortChoiceError('no serial port found on this machine: plug the board in, or give -p <port> (a path or rfc2217://host:port) or ESPPORT');
  throw new PortChoiceError(`${ports.length} serial ports; pick one with -p <port> or ESPPORT:\n${ports.map((p) => `  ${formatPort(p)}`).join('\n')}`);
}

/** What a ROM loader command does with the board at the end, as esptool's --after (docs/rom-after.md). */
export type AfterAction = 'hard-reset' | 'no-reset';

export function afterOption(value: string): AfterAction {
  // esptool 4 spelled them with underscores (hard_reset, no_reset); esptool 5 with hyphens.
  const v = value.replace(/_/g, '-');
  if (v === 'hard-reset' || v === 'no-reset') return v;
  throw new InvalidArgumentError(`must be hard-reset (the board runs its firmware again) or no-reset (it stays in the ROM loader): ${value}`);
}

/** --after hard-reset|no-reset, hard-reset by default, for every command that talks to the ROM loader. */
export function afterFlag(): Option {
  return new Option('--after <action>', 'at the end: hard-reset (the board runs its firmware again, its boot line awaited) or no-reset (it stays in the ROM download mode)').default('hard-reset').argParser(afterOption);
}
