// A rig file describes the bench: its boards (role, kind, identity, position), the site Wi-Fi, the
// cloud and the MQTT broker (docs/rig-file.md). Validated at load by one schema (RigFileSchema), every
// error naming the field, what was expected and the value:
// `rig.boards[2].port: expected rfc2217://host:port, got "ttyUSB0"`.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CHIPS, type ChipName } from '../firmware/image/chips.ts';
import { Type, type Static } from '@sinclair/typebox';
import { checker, describeProblem, EXPECTED, shown } from '../cloud/schema/validator.ts';
import { DEVICE_UUID_PATTERN, DEVICE_UUID_RULE } from '../cloud/schema/api.ts';
import { FileArgumentError, fileErrorMessage, isFileSystemError } from '../cloud/file-errors.ts';
import { RigError } from './rig-error.ts';
import { parseResetMethod, RESET_METHODS, type ResetMethod } from './transport/reset-sequence.ts';

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
  /** The file it was loaded from (absolute) and the SHA-256 of its text; absent for a rig built in code. */
  file?: { path: string; sha256: string };
  /** Boards taken from a labgrid coordinator's places instead (docs/board-farm.md): one tag set per board, in order. */
  farm?: RigFarm;
}

export interface RigFarm {
  /** host:port; `fleet bench --farm` gives or overrides it. */
  coordinator?: string;
  places: Record<string, string>[];
  /** How long a job waits for its places in all. */
  waitSeconds: number;
}

/** How long a job waits for its places unless the rig or --farm-wait says otherwise. */
export const FARM_WAIT_SECONDS = 600;

export { RigError };

const text = (pattern: string, expected: string, description: string, dflt?: string) =>
  Type.String({ pattern, description, [EXPECTED]: expected, ...(dflt === undefined ? {} : { default: dflt }) });
const oneOf = <T extends string>(values: readonly T[], description: string, dflt?: T) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description, [EXPECTED]: values.join(', ').replace(/, ([^,]*)$/, ' or $1'), ...(dflt === undefined ? {} : { default: dflt }) });
const Position = Type.Object(
  { x: Type.Number({ [EXPECTED]: 'metres' }), y: Type.Number({ [EXPECTED]: 'metres' }) },
  { description: 'metres on the bench; radio range is about 1.5 m at 2 dBm and doubles every 6 dB', [EXPECTED]: '{"x": metres, "y": metres}' },
);
const Mac = (description: string) => text('^([0-9A-F]{2}:){5}[0-9A-F]{2}$', 'a MAC address such as 24:0A:C4:E0:00:11 (upper case, colons)', description);
/** A field a physical board must not give: the harness reads it from the board. */
const ReadFromBoard = Type.Unsafe<never>({ not: {}, [EXPECTED]: 'nothing: the harness reads it from a serial or rfc2217 board' });
const LOOPBACK_URL = '^http://(127\\.\\d+\\.\\d+\\.\\d+|localhost)(:\\d+)?$';

/** One board of the rig file (docs/rig-file.md is checked against this by test/harness/rig-doc.test.ts). */
export const RigBoardSchema = Type.Object(
  {
    id: text('^[a-z0-9-]{1,32}$', '1 to 32 of a-z 0-9 -', 'the board\'s name on the bench and in the report'),
    role: oneOf(['controller', 'client'] as const, 'controller (Ethernet + Wi-Fi) or client (Wi-Fi)'),
    kind: oneOf(['virtual', 'serial', 'rfc2217'] as const, 'virtual (XS on this machine), serial (a local port) or rfc2217 (an RFC 2217 server)', 'virtual'),
    drive: Type.Optional(oneOf(['direct', 'rfc2217'] as const, 'virtual boards: driven in-process, or through their RFC 2217 port as a physical board', 'direct')),
    uuid: Type.Optional(text(DEVICE_UUID_PATTERN, DEVICE_UUID_RULE, 'virtual boards: the device UUID (the firmware\'s and the cloud\'s grammar)')),
    wifi_mac: Type.Optional(Mac('virtual boards: the Wi-Fi MAC')),
    ethernet_mac: Type.Optional(Mac('virtual controllers: the Ethernet MAC')),
    fuse_key: Type.Optional(text('^[0-9a-f]{64}$', '64 lower-case hexadecimal digits', 'virtual boards: the eFuse key; it stays in the host process')),
    position: Type.Optional(Position),
    build: Type.Optional(oneOf(['production', 'debug'] as const, 'production or debug', 'production')),
    hardware_class: Type.Optional(text('^[A-Za-z0-9._-]{1,64}$', '1 to 64 of A-Z a-z 0-9 . _ -', 'default ctl-s3 (controller) or lamp-c3 (client)')),
    product_hex: Type.Optional(text('^0x[0-9a-f]{8}$', '0x and 8 lower-case hexadecimal digits', 'default 0x00c0ffee', '0x00c0ffee')),
    firmware_version: Type.Optional(text('^\\d{4}\\.\\d{2}\\.\\d{2}$', 'YYYY.MM.bb', 'virtual boards: the version the factory flashes', '2026.01.01')),
    admin_password: Type.Optional(text('^.{8,128}$', '8 to 128 characters', 'the controller\'s admin password', 'bench-admin-password')),
    chip: Type.Optional(oneOf(Object.keys(CHIPS) as ChipName[], 'the board\'s chip', 'esp32s3')),
    flash_size: Type.Optional(oneOf(['2MB', '4MB', '8MB', '16MB', '32MB'] as const, 'the flash size', '8MB')),
    port: Type.Optional(text('^\\S+$', 'a serial port path such as /dev/ttyUSB0', 'serial: the port path; rfc2217: rfc2217://host:port')),
    baud_rate: Type.Optional(Type.Integer({ minimum: 1, description: 'the console\'s rate', default: 115200, [EXPECTED]: 'a whole number' })),
    reset: Type.Optional(oneOf(RESET_METHODS, 'how DTR/RTS reach EN and IO0', 'classic')),
    ethernet_url: Type.Optional(text('^http://[^/]+$', 'http://host[:port]', 'where the harness reaches the board\'s API on Ethernet')),
    softap_url: Type.Optional(text('^http://[^/]+$', 'http://host[:port]', 'where the harness reaches the board\'s SoftAP listener')),
  },
  {
    allOf: [
      // A virtual board (the default kind) carries its identity; a virtual controller its Ethernet MAC too.
      { if: { properties: { kind: { const: 'virtual' } } }, then: { required: ['uuid', 'wifi_mac', 'fuse_key', 'position'] } },
      { if: { properties: { kind: { const: 'virtual' }, role: { const: 'controller' } }, required: ['role'] }, then: { required: ['ethernet_mac'] } },
      {
        if: { properties: { kind: { enum: ['serial', 'rfc2217'] } }, required: ['kind'] },
        then: {
          required: ['port'],
          properties: {
            port: { type: 'string', [EXPECTED]: 'a serial port path such as /dev/ttyUSB0 (rfc2217: rfc2217://host:port)' },
            ...Object.fromEntries(['uuid', 'wifi_mac', 'ethernet_mac', 'fuse_key', 'firmware_version', 'drive'].map((k) => [k, ReadFromBoard])),
          },
        },
      },
      {
        if: { properties: { kind: { const: 'rfc2217' } }, required: ['kind'] },
        then: { properties: { port: { type: 'string', pattern: '^rfc2217://[^/]+:\\d{1,5}$', [EXPECTED]: 'rfc2217://host:port' } } },
      },
    ],
  },
);

/** The rig file (docs/rig-file.md). */
export const RigFileSchema = Type.Object({
  name: text('^[a-z0-9-]{1,64}$', '1 to 64 of a-z 0-9 -', 'lower-case letters, digits, -'),
  description: Type.Optional(Type.String({ description: 'free text' })),
  site_wifi: Type.Optional(
    Type.Object({
      ssid: Type.Optional(Type.String({ minLength: 1, default: 'plant-floor' })),
      password: Type.Optional(text('^.{8,63}$', '8 to 63 characters', 'WPA2 passphrase', 'plant-floor-wpa2')),
      position: Type.Optional(Position),
    }, { description: 'the plant\'s Wi-Fi that clients join in normal mode' }),
  ),
  cloud: Type.Optional(
    Type.Object(
      { kind: oneOf(['embedded', 'external'] as const, 'embedded (one per scenario) or external', 'embedded'), url: Type.Optional(text(LOOPBACK_URL, 'a loopback http URL such as http://127.0.0.1:8080', 'external: the cloud\'s URL')) },
      { allOf: [{ if: { properties: { kind: { const: 'external' } }, required: ['kind'] }, then: { required: ['url'] } }] },
    ),
  ),
  mqtt: Type.Optional(Type.Object({ kind: oneOf(['aedes', 'mosquitto'] as const, 'aedes (embedded) or mosquitto', 'aedes'), port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })) })),
  boards: Type.Optional(Type.Array(RigBoardSchema, { minItems: 1, description: 'the boards', [EXPECTED]: 'at least one board' })),
  farm: Type.Optional(
    Type.Object(
      {
        coordinator: Type.Optional(text('^[A-Za-z0-9.-]+:\\d{1,5}$', 'host:port', 'the labgrid coordinator')),
        places: Type.Array(Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]+$' }), Type.String({ minLength: 1 }), { [EXPECTED]: 'an object of place tags such as {"role": "controller"}' }), { minItems: 1, [EXPECTED]: 'at least one place\'s tags' }),
        wait_seconds: Type.Optional(Type.Integer({ minimum: 1, [EXPECTED]: 'a whole number of seconds' })),
      },
      { description: 'boards taken from a labgrid coordinator\'s places, one tag set per board' },
    ),
  ),
  build_settings: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'rig-wide: the firmware settings the physical boards\' build was made with', [EXPECTED]: 'an object of firmware settings (firmware/src/core/settings.ts)' })),
  bench_host: Type.Optional(text('^(\\d{1,3}\\.){3}\\d{1,3}$', 'an IPv4 address', 'rig-wide: where the bench\'s cloud, OTA image server and MQTT broker listen', '127.0.0.1')),
});
export type RigFile = Static<typeof RigFileSchema>;

const checkRig = checker(RigFileSchema);

function fail(where: string, expected: string, value: unknown): never {
  throw new RigError(`${where}: expected ${expected}, got ${shown(value)}`);
}

export function parseRig(value: unknown, source = 'rig'): RigSpec {
  if (!checkRig(value)) throw new RigError(describeProblem(checkRig.problems()[0]!, source));
  const r = value;
  if (!r.boards && !r.farm) throw new RigError(`${source}.boards: expected at least one board (or a farm section), got nothing`);
  const boards = (r.boards ?? []).map((o, i): BoardSpec => {
    const kind = o.kind ?? 'virtual';
    const physical = kind !== 'virtual';
    const spec: BoardSpec = {
      id: o.id,
      role: o.role,
      kind,
      // A physical board's identity is read from it when the bench prepares it (serial-board.ts).
      uuid: o.uuid ?? '',
      wifiMac: o.wifi_mac ?? '',
      position: o.position ?? { x: 0, y: 0 },
      hardwareClass: o.hardware_class ?? (o.role === 'controller' ? 'ctl-s3' : 'lamp-c3'),
      productHex: o.product_hex ?? '0x00c0ffee',
      firmwareVersion: physical ? '' : (o.firmware_version ?? '2026.01.01'),
      build: o.build ?? 'production',
      adminPassword: o.admin_password ?? 'bench-admin-password',
      chip: o.chip ?? 'esp32s3',
      flashSizeBytes: Number((o.flash_size ?? '8MB').slice(0, -2)) * 1024 * 1024,
    };
    if (o.ethernet_mac !== undefined) spec.ethernetMac = o.ethernet_mac;
    if (!physical) {
      spec.fuseKey = o.fuse_key!;
      spec.drive = o.drive ?? 'direct';
    } else {
      spec.port = o.port!;
      spec.baudRate = o.baud_rate ?? 115200;
      spec.resetMethod = parseResetMethod(o.reset ?? 'classic');
      if (o.ethernet_url !== undefined) spec.ethernetUrl = o.ethernet_url;
      if (o.softap_url !== undefined) spec.softapUrl = o.softap_url;
    }
    if (spec.role === 'client' && !physical) delete spec.ethernetMac;
    return spec;
  });
  // What a schema cannot say: ids and MAC addresses unique across the rig.
  const ids = new Set<string>();
  const macs = new Set<string>();
  boards.forEach((b, i) => {
    if (ids.has(b.id)) fail(`${source}.boards[${i}].id`, 'a board id unique on the rig', b.id);
    ids.add(b.id);
    for (const [key, mac] of [['wifi_mac', b.wifiMac], ['ethernet_mac', b.ethernetMac]] as const) {
      if (!mac) continue;
      if (macs.has(mac)) fail(`${source}.boards[${i}].${key}`, 'a MAC address unique on the rig', mac);
      macs.add(mac);
    }
  });
  const site = r.site_wifi ?? {};
  const cloud = r.cloud ?? { kind: 'embedded' };
  const mqtt = r.mqtt ?? { kind: 'aedes' };
  return {
    name: r.name,
    description: r.description ?? '',
    siteWifi: { ssid: site.ssid ?? 'plant-floor', password: site.password ?? 'plant-floor-wpa2', position: site.position ?? { x: 0, y: 8 } },
    cloud: cloud.kind === 'external' ? { kind: 'external', url: cloud.url! } : { kind: 'embedded' },
    mqtt: mqtt.kind === 'mosquitto' ? { kind: 'mosquitto', ...(mqtt.port !== undefined ? { port: mqtt.port } : {}) } : { kind: 'aedes' },
    boards,
    buildSettings: { ...(r.build_settings ?? {}) },
    benchHost: r.bench_host ?? '127.0.0.1',
    ...(r.farm ? { farm: { ...(r.farm.coordinator ? { coordinator: r.farm.coordinator } : {}), places: r.farm.places, waitSeconds: r.farm.wait_seconds ?? FARM_WAIT_SECONDS } } : {}),
  };
}

export function loadRig(path: string): RigSpec {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    // A rig file that is not there is a usage error (exit 2); one that is wrong is a RigError (exit 4).
    throw isFileSystemError(err) ? new FileArgumentError(fileErrorMessage(err, 'the rig file')) : err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RigError(`${path} is not JSON: ${(err as Error).message}`);
  }
  return { ...parseRig(value, path), file: { path: resolve(path), sha256: createHash('sha256').update(text).digest('hex') } };
}
