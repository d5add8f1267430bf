// `fleet ports`: the local serial ports node-serialport lists, with their USB vendor and product
// ids, and which are an Espressif chip's own USB or one of the USB-UART bridges dev boards carry,
// with the reset method that fits (docs/physical-rig.md).
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ResetMethod } from './reset-sequence.ts';

/** What node-serialport's SerialPort.list() gives (ids are hex text without 0x, case varies by OS). */
export interface ListedPort {
  path: string;
  manufacturer?: string | undefined;
  serialNumber?: string | undefined;
  vendorId?: string | undefined;
  productId?: string | undefined;
}

export interface SerialPortInfo {
  path: string;
  vendorId?: number;
  productId?: number;
  manufacturer?: string;
  serialNumber?: string;
  /** What the USB ids say the port is; undefined for a port without known ids. */
  bridge?: string;
  espressif: boolean;
  resetMethod?: ResetMethod;
}

export const ESPRESSIF_VID = 0x303a;

/** USB ids of the chips on ESP32 dev boards (vendor → product → name). */
const KNOWN: { vid: number; pid?: number; name: string; reset: ResetMethod }[] = [
  { vid: ESPRESSIF_VID, pid: 0x1001, name: 'Espressif USB-Serial/JTAG', reset: 'usb-jtag' },
  { vid: ESPRESSIF_VID, pid: 0x0002, name: 'Espressif USB-OTG (ESP32-S2/S3 ROM download)', reset: 'usb-jtag' },
  { vid: ESPRESSIF_VID, name: 'Espressif USB device', reset: 'usb-jtag' },
  { vid: 0x10c4, pid: 0xea60, name: 'Silicon Labs CP210x', reset: 'classic' },
  { vid: 0x10c4, pid: 0xea70, name: 'Silicon Labs CP2105', reset: 'classic' },
  { vid: 0x1a86, pid: 0x7523, name: 'WCH CH340', reset: 'classic' },
  { vid: 0x1a86, pid: 0x55d4, name: 'WCH CH9102', reset: 'classic' },
  { vid: 0x1a86, pid: 0x55d3, name: 'WCH CH343', reset: 'classic' },
  { vid: 0x0403, pid: 0x6001, name: 'FTDI FT232R', reset: 'classic' },
  { vid: 0x0403, pid: 0x6010, name: 'FTDI FT2232H', reset: 'classic' },
  { vid: 0x0403, pid: 0x6014, name: 'FTDI FT232H', reset: 'classic' },
  { vid: 0x0403, pid: 0x6015, name: 'FTDI FT231X', reset: 'classic' },
  { vid: 0x067b, pid: 0x2303, name: 'Prolific PL2303', reset: 'classic' },
];

function hexId(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const text = value.replace(/^0x/i, '');
  return /^[0-9a-f]{1,4}$/i.test(text) ? parseInt(text, 16) : undefined;
}

export function describePort(p: ListedPort): SerialPortInfo {
  const vendorId = hexId(p.vendorId);
  const productId = hexId(p.productId);
  const known = vendorId === undefined ? undefined : KNOWN.find((k) => k.vid === vendorId && (k.pid === undefined || k.pid === productId));
  return {
    path: p.path,
    ...(vendorId !== undefined ? { vendorId } : {}),
    ...(productId !== undefined ? { productId } : {}),
    ...(p.manufacturer ? { manufacturer: p.manufacturer } : {}),
    ...(p.serialNumber ? { serialNumber: p.serialNumber } : {}),
    ...(known ? { bridge: known.name, resetMethod: known.reset } : {}),
    espressif: vendorId === ESPRESSIF_VID,
  };
}

/** Espressif's ports first, then the known bridges, then the rest; by path within each. */
export function describePorts(list: ListedPort[]): SerialPortInfo[] {
  const rank = (p: SerialPortInfo) => (p.espressif ? 0 : p.bridge ? 1 : 2);
  return list.map(describePort).sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path));
}

const hex4 = (n: number | undefined) => (n === undefined ? '----' : n.toString(16).padStart(4, '0'));

export function formatPort(p: SerialPortInfo): string {
  const mark = p.espressif ? '*' : p.bridge ? '+' : ' ';
  const what = [p.bridge ?? p.manufacturer ?? '', p.serialNumber ? `serial ${p.serialNumber}` : '', p.resetMethod ? `reset ${p.resetMethod}` : ''].filter(Boolean).join(', ');
  return `${mark} ${p.path.padEnd(24)} ${hex4(p.vendorId)}:${hex4(p.productId)}  ${what}`.trimEnd();
}

/**
 * On Linux node-serialport lists ports through `udevadm`; where it is missing (a container, a minimal
 * system) the USB serial devices are read from sysfs instead: ttyUSB* and ttyACM* with the idVendor
 * and idProduct of the USB device above them.
 */
export function listFromSysfs(root = '/sys/class/tty'): ListedPort[] {
  if (!existsSync(root)) return [];
  const out: ListedPort[] = [];
  for (const name of readdirSync(root).filter((n) => /^tty(USB|ACM)\d+$/.test(n))) {
    let dir = join(root, name, 'device');
    if (!existsSync(dir)) continue;
    dir = realpathSync(dir);
    while (dir !== '/' && !existsSync(join(dir, 'idVendor'))) dir = dirname(dir);
    const read = (f: string) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8').trim() : undefined);
    out.push({ path: `/dev/${name}`, vendorId: read('idVendor'), productId: read('idProduct'), manufacturer: read('manufacturer'), serialNumber: read('serial') });
  }
  return out;
}

export async function listSerialPorts(): Promise<SerialPortInfo[]> {
  const { SerialPort } = await import('serialport');
  try {
    return describePorts(await SerialPort.list());
  } catch (err) {
    if (process.platform !== 'linux') throw err;
    return describePorts(listFromSysfs());
  }
}
