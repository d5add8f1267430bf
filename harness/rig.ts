// A rig file describes the bench: its boards (role, kind, identity, position), the site Wi-Fi, the
// cloud and the MQTT broker (docs/rig-file.md). Validated at load, every error naming the field.
import { readFileSync } from 'node:fs';
import { CHIPS, type ChipName } from '../firmware/image/chips.ts';
import { parseResetMethod, type ResetMethod } from './transport/reset-sequence.ts';

export type BoardKind = 'virtual' | 'serial' | 'rfc2217';

export interface BoardSpec {
  id: string;
  role: 'controller' | 'client';
  kind: BoardKind;
  uuid: string;
  wifiMac: string;
  ethernetMac?: string;
  /** Virtual boards only: the eFuse key (64 hex digits); a real board's never leaves its chip. */
  fuseKey?: string;
  position: { x: number; y: number };
  hardwareClass: string;
  productHex: string;
  firmwareVersion: string;
  build: 'production' | 'debug';
  adminPassword: string;
  /** The board's chip (DESIGN.md section 7: ESP32-S3 by default) and its flash size in bytes (8 MB by default). */
  chip: ChipName;
  flashSizeBytes: number;
  /**
   * Virtual boards: `direct` (default) drives the board in-process; `rfc2217` starts it but drives
   * it as a physical board, through its RFC 2217 port and the addresses its console announces
   * (harness/serial-board.ts).
   */
  drive?: 'direct' | 'rfc2217';
  /** serial: the port path; rfc2217: rfc2217://host:port. */
  port?: string;
  /** The console's rate (115200). */
  baudRate?: number;
  /** How DTR/RTS reach EN and IO0 (classic: a USB-UART bridge; usb-jtag: the S3's own USB; none). */
  resetMethod?: ResetMethod;
  /** A real board's device-local API; when absent, read from its console (`board: ethernet: listening on …`). */
  ethernetUrl?: string;
  /** Where the harness reaches the board's SoftAP listener (a Wi-Fi adapter of the bench PC joined to it), if it can. */
  softapUrl?: string;
}

export interface RigSpec {
  name: string;
  description: string;
  siteWifi: { ssid: string; password: string; position: { x: number; y: number } };
  cloud: { kind: 'embedded' } | { kind: 'external'; url: string };
  mqtt: { kind: 'aedes' } | { kind: 'mosquitto'; port?: number };
  boards: BoardSpec[];
  /** Firmware settings the physical boards' build was made with (docs/physical-rig.md); scenarios that need others are not applicable. */
  buildSettings: Record<string, unknown>;
  /** Where the bench's cloud, OTA image server and MQTT broker listen: loopback, or the bench PC's address on the boards' network. */
  benchHost: string;
}

export class RigError extends Error {
  override name = 'RigError';
}

const MAC = /^([0-9A-F]{2}:){5}[0-9A-F]{2}$/;
const UUID = /^[A-Za-z0-9._:-]{1,64}$/;

function fail(where: string, message: string, value?: unknown): never {
  throw new RigError(`${where}: ${message}${value === undefined ? '' : `: ${JSON.stringify(value)}`}`);
}

function str(o: Record<string, unknown>, key: string, where: string, pattern?: RegExp, fallback?: string): string {
  const v = o[key] ?? fallback;
  if (typeof v !== 'string' || v === '') fail(`${where}.${key}`, 'must be a non-empty string', v);
  if (pattern && !pattern.test(v)) fail(`${where}.${key}`, `must match ${pattern}`, v);
  return v;
}

function position(v: unknown, where: string): { x: number; y: number } {
  const p = v as { x?: unknown; y?: unknown } | undefined;
  if (!p || typeof p.x !== 'number' || typeof p.y !== 'number' || !Number.isFinite(p.x) || !Number.isFinite(p.y)) {
    fail(where, 'must be {"x": metres, "y": metres}', v);
  }
  return { x: p.x, y: p.y };
}

function buildSettings(v: unknown, where: string): Record<string, unknown> {
  if (v === undefined) return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(where, 'must be an object of firmware settings (firmware/src/core/settings.ts)', v);
  return { ...(v as Record<string, unknown>) };
}

export function parseRig(value: unknown, source = 'rig'): RigSpec {
  if (typeof value !== 'object' || value === null) fail(source, 'must be a JSON object');
  const r = value as Record<string, unknown>;
  const site = (r.site_wifi ?? {}) as Record<string, unknown>;
  const cloud = (r.cloud ?? { kind: 'embedded' }) as Record<string, unknown>;
  const mqtt = (r.mqtt ?? { kind: 'aedes' }) as Record<string, unknown>;
  if (!Array.isArray(r.boards) || r.boards.length === 0) fail(`${source}.boards`, 'must list at least one board');
  const boards = r.boards.map((b: unknown, i: number): BoardSpec => {
    const where = `${source}.boards[${i}]`;
    if (typeof b !== 'object' || b === null) fail(where, 'must be an object');
    const o = b as Record<string, unknown>;
    const role = o.role;
    if (role !== 'controller' && role !== 'client') fail(`${where}.role`, 'must be controller or client', role);
    const kind = o.kind ?? 'virtual';
    if (kind !== 'virtual' && kind !== 'serial' && kind !== 'rfc2217') fail(`${where}.kind`, 'must be virtual, serial or rfc2217', kind);
    const physical = kind !== 'virtual';
    if (physical) for (const key of ['uuid', 'wifi_mac', 'ethernet_mac', 'fuse_key', 'firmware_version', 'drive']) if (o[key] !== undefined) fail(`${where}.${key}`, `is not given for a ${kind} board: the harness reads it from the board`, o[key]);
    const spec: BoardSpec = {
      id: str(o, 'id', where, /^[a-z0-9-]{1,32}$/),
      role,
      kind,
      // A physical board's identity is read from it when the bench prepares it (serial-board.ts).
      uuid: physical ? '' : str(o, 'uuid', where, UUID),
      wifiMac: physical ? '' : str(o, 'wifi_mac', where, MAC),
      position: physical && o.position === undefined ? { x: 0, y: 0 } : position(o.position, `${where}.position`),
      hardwareClass: str(o, 'hardware_class', where, /^[A-Za-z0-9._-]{1,64}$/, role === 'controller' ? 'ctl-s3' : 'lamp-c3'),
      productHex: str(o, 'product_hex', where, /^0x[0-9a-f]{8}$/, '0x00c0ffee'),
      firmwareVersion: physical ? '' : str(o, 'firmware_version', where, /^\d{4}\.\d{2}\.\d{2}$/, '2026.01.01'),
      build: o.build === 'debug' ? 'debug' : 'production',
      adminPassword: str(o, 'admin_password', where, /^.{8,128}$/, 'bench-admin-password'),
      chip: str(o, 'chip', where, new RegExp(`^(${Object.keys(CHIPS).join('|')})$`), 'esp32s3') as ChipName,
      flashSizeBytes: Number(str(o, 'flash_size', where, /^(2|4|8|16|32)MB$/, '8MB').slice(0, -2)) * 1024 * 1024,
    };
    if (o.build !== undefined && o.build !== 'debug' && o.build !== 'production') fail(`${where}.build`, 'must be production or debug', o.build);
    if (role === 'controller' && !physical) spec.ethernetMac = str(o, 'ethernet_mac', where, MAC);
    if (kind === 'virtual') {
      spec.fuseKey = str(o, 'fuse_key', where, /^[0-9a-f]{64}$/);
      if (o.drive !== undefined && o.drive !== 'direct' && o.drive !== 'rfc2217') fail(`${where}.drive`, 'must be direct or rfc2217', o.drive);
      spec.drive = o.drive === 'rfc2217' ? 'rfc2217' : 'direct';
    } else {
      spec.port = str(o, 'port', where, kind === 'rfc2217' ? /^rfc2217:\/\/[^/]+:\d{1,5}$/ : /^\S+$/);
      if (o.baud_rate !== undefined && (typeof o.baud_rate !== 'number' || !Number.isInteger(o.baud_rate))) fail(`${where}.baud_rate`, 'must be a whole number', o.baud_rate);
      spec.baudRate = (o.baud_rate as number | undefined) ?? 115200;
      try {
        spec.resetMethod = parseResetMethod(typeof o.reset === 'string' ? o.reset : o.reset === undefined ? 'classic' : String(o.reset));
      } catch (err) {
        fail(`${where}.reset`, (err as Error).message);
      }
      if (o.ethernet_url !== undefined) spec.ethernetUrl = str(o, 'ethernet_url', where, /^http:\/\/[^/]+$/);
      if (o.softap_url !== undefined) spec.softapUrl = str(o, 'softap_url', where, /^http:\/\/[^/]+$/);
    }
    return spec;
  });
  const ids = new Set<string>();
  const macs = new Set<string>();
  for (const b of boards) {
    if (ids.has(b.id)) fail(`${source}.boards`, 'board ids must be unique', b.id);
    ids.add(b.id);
    for (const mac of [b.wifiMac, b.ethernetMac]) {
      if (!mac) continue;
      if (macs.has(mac)) fail(`${source}.boards`, 'MAC addresses must be unique', mac);
      macs.add(mac);
    }
  }
  const cloudKind = cloud.kind ?? 'embedded';
  const mqttKind = mqtt.kind ?? 'aedes';
  if (cloudKind !== 'embedded' && cloudKind !== 'external') fail(`${source}.cloud.kind`, 'must be embedded or external', cloudKind);
  if (mqttKind !== 'aedes' && mqttKind !== 'mosquitto') fail(`${source}.mqtt.kind`, 'must be aedes or mosquitto', mqttKind);
  return {
    name: str(r, 'name', source, /^[a-z0-9-]{1,64}$/),
    description: typeof r.description === 'string' ? r.description : '',
    siteWifi: { ssid: str(site, 'ssid', `${source}.site_wifi`, undefined, 'plant-floor'), password: str(site, 'password', `${source}.site_wifi`, /^.{8,63}$/, 'plant-floor-wpa2'), position: site.position ? position(site.position, `${source}.site_wifi.position`) : { x: 0, y: 8 } },
    cloud: cloudKind === 'external' ? { kind: 'external', url: str(cloud, 'url', `${source}.cloud`, /^http:\/\/(127\.\d+\.\d+\.\d+|localhost)(:\d+)?$/) } : { kind: 'embedded' },
    mqtt: mqttKind === 'mosquitto' ? { kind: 'mosquitto', ...(typeof mqtt.port === 'number' ? { port: mqtt.port } : {}) } : { kind: 'aedes' },
    boards,
    buildSettings: buildSettings(r.build_settings, `${source}.build_settings`),
    benchHost: str(r, 'bench_host', source, /^(\d{1,3}\.){3}\d{1,3}$/, '127.0.0.1'),
  };
}

export function loadRig(path: string): RigSpec {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new RigError(`cannot read the rig file ${path}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RigError(`${path} is not JSON: ${(err as Error).message}`);
  }
  return parseRig(value, path);
}
