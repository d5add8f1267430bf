// Shared by the firmware bench, its probes and the heap-budget test: board identities, the board's
// API, backups of a given size, and what the host can see of a virtual board's firmware process.
import { readFileSync } from 'node:fs';
import type { SdkBoard } from '../../harness/virtual-board.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';

/**
 * A controller identity numbered `n` (UUID `<prefix>-<n>`, MACs from n): the production build of the
 * controller with Ethernet, the one variant every user of this file shares (one SDK host build).
 */
export function controllerIdentity(n: number, prefix = 'bench-ctl'): DeviceIdentity {
  const h = n.toString(16).padStart(4, '0').toUpperCase();
  return { uuid: `${prefix}-${n}`, role: 'controller', ethernetMac: `24:0A:C4:E0:${h.slice(0, 2)}:${h.slice(2)}`, wifiMac: `24:0A:C4:10:${h.slice(0, 2)}:${h.slice(2)}`, hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' };
}

/** One call of a board's API on its Ethernet interface; a status of 300 or more throws. */
export async function boardApi(b: Pick<SdkBoard, 'urls'>, method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const res = await fetch(b.urls.ethernet + path, { method, headers, body });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : undefined;
}

/** A JSON backup of exactly `bytes` bytes, shaped like a controller configuration export. */
export function backupOfSize(bytes: number): string {
  const outputs: string[] = [];
  let size = '{"outputs":[],"pad":""}'.length;
  for (let i = 0; size + 40 < bytes; i++) {
    const item = `{"id":${i},"name":"Light ${String(i).padStart(5, '0')}","level":${i % 100}}`;
    const added = item.length + (outputs.length > 0 ? 1 : 0);
    if (size + added > bytes) break;
    outputs.push(item);
    size += added;
  }
  const head = `{"outputs":[${outputs.join(',')}],"pad":"`;
  return head + ' '.repeat(bytes - head.length - 2) + '"}';
}

/** Resident memory of a process (/proc/<pid>/status): now and its high-water mark, in KiB; zeros when it is gone. */
export function processRss(pid: number | undefined): { rssKb: number; peakKb: number } {
  if (!pid) return { rssKb: 0, peakKb: 0 };
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rssKb: kb('VmRSS'), peakKb: kb('VmHWM') };
  } catch {
    return { rssKb: 0, peakKb: 0 };
  }
}
