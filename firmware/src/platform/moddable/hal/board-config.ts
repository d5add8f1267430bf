// The board's build-time configuration: the manifest's "config" (mcconfig writes it to the `mc/config`
// module; `name=value` arguments on the mcconfig command line override it, as strings). Validated once
// at start-up, defaults in one object; a bad value is reported with the value.
import { defaultSettings, type FirmwareSettings } from '../../../core/settings.ts';
import config from 'mc/config';
import type { BuildKind, Role } from '../../../hal/system.ts';
import { BOARD_HTTP_LIMITS, type ListenerLimits } from './http-limits.ts';

export interface ConsolePort {
  /** UART number (ESP32-S3: 0, 1 or 2) and its pins; UART0 is the USB-UART bridge on a DevKitC. */
  port: number;
  transmit: number;
  receive: number;
  baud: number;
  /**
   * The UART's device path where the port is a host's terminal (the SDK's Linux `embedded:io/serial`
   * opens a path: a virtual board's build sets it, firmware/sdk-host); empty on a chip.
   */
  device: string;
}

export interface BoardConfig {
  role: Role;
  hardwareClass: string;
  productHex: string;
  /** production, or debug: the `fault` console command and the 30 min provisioning time-out (core/settings.ts). */
  build: BuildKind;
  /** A fixed UUID; empty: the NVS preference fleet/uuid, else derived from the factory MAC (system.ts). */
  uuid: string;
  /** psa: the native PSA crypto (the SHA/AES accelerators); pure: the portable @noble fallback. */
  crypto: 'psa' | 'pure';
  sntpHost: string;
  console: ConsolePort;
  /** A DER CA certificate resource for HTTPS to the cloud; empty: SecureSocket's built-in CA store. */
  cloudCaResource: string;
  /** Controllers have the W5500; clients are Wi-Fi only (hal/system.ts). */
  ethernet: boolean;
  /** The SSD1306 is optional: a board without one runs headless. */
  display: boolean;
  /** The listeners' limits (docs/board-http-limits.md): config "http" overrides them by name. */
  http: ListenerLimits;
  /**
   * Where the file system's paths start (config "file.root"): "/" on LittleFS; a virtual board's
   * flash folder on the host (firmware/sdk-host).
   */
  fileRoot: string;
  /**
   * The core's build-time settings (core/settings.ts, spec 8), config "settings" by name: a rig's
   * `build_settings` (shorter time-outs for a bench) are built in this way.
   */
  settings: Partial<FirmwareSettings>;
}

export const BOARD_DEFAULTS: Readonly<BoardConfig> = Object.freeze({
  role: 'controller',
  hardwareClass: 'ctl-s3',
  productHex: '0x00C0FFEE',
  build: 'production',
  uuid: '',
  crypto: 'psa',
  sntpHost: 'pool.ntp.org',
  console: Object.freeze({ port: 0, transmit: 43, receive: 44, baud: 115_200, device: '' }),
  cloudCaResource: '',
  ethernet: true,
  display: true,
  http: BOARD_HTTP_LIMITS,
  fileRoot: '/',
  settings: Object.freeze({}),
});

export class BoardConfigError extends Error {
  override name = 'BoardConfigError';
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === '') return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new BoardConfigError(`config "${name}" must be one of ${allowed.join(', ')}: ${JSON.stringify(value)}`);
}

function text(name: string, value: unknown, fallback: string, pattern?: RegExp): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || (pattern && value !== '' && !pattern.test(value))) {
    throw new BoardConfigError(`config "${name}" is not valid: ${JSON.stringify(value)}`);
  }
  return value;
}

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw new BoardConfigError(`config "${name}" must be an integer from ${min} to ${max}: ${JSON.stringify(value)}`);
  }
  return n;
}

function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (value === true || value === 'true' || value === 1 || value === '1') return true;
  if (value === false || value === 'false' || value === 0 || value === '0') return false;
  throw new BoardConfigError(`config "${name}" must be true or false: ${JSON.stringify(value)}`);
}

/** config "http": each limit a positive integer; a name that is no limit is an error, not ignored. */
function httpLimits(value: unknown, defaults: ListenerLimits): ListenerLimits {
  const source = (value ?? {}) as Record<string, unknown>;
  const limits: ListenerLimits = { ...defaults };
  for (const name of Object.keys(source)) {
    if (!(name in limits)) throw new BoardConfigError(`config "http.${name}" is not a listener limit: ${JSON.stringify(source[name])}`);
  }
  for (const name of Object.keys(limits) as (keyof ListenerLimits)[]) limits[name] = integer(`http.${name}`, source[name], defaults[name], 1, 0x7fff_ffff);
  return limits;
}

/** config "settings": each a number from 0 up, named as core/settings.ts names them; another name is an error. */
function firmwareSettings(value: unknown): Partial<FirmwareSettings> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null) throw new BoardConfigError(`config "settings" must be an object: ${JSON.stringify(value)}`);
  const known = defaultSettings('production');
  const settings: Record<string, number> = {};
  for (const [name, v] of Object.entries(value)) {
    if (!(name in known)) throw new BoardConfigError(`config "settings.${name}" is not a firmware setting: ${JSON.stringify(v)}`);
    const n = typeof v === 'string' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw new BoardConfigError(`config "settings.${name}" must be a number from 0 up: ${JSON.stringify(v)}`);
    settings[name] = n;
  }
  return settings as Partial<FirmwareSettings>;
}

/** Validates `source` (mc/config by default: tests pass their own). */
export function readBoardConfig(source: Record<string, unknown> = config): BoardConfig {
  const d = BOARD_DEFAULTS;
  const c = (source.console ?? {}) as Record<string, unknown>;
  const role = oneOf('role', source.role, ['controller', 'client'], d.role);
  return {
    role,
    hardwareClass: text('hardware_class', source.hardware_class, d.hardwareClass, /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/),
    productHex: text('product_hex', source.product_hex, d.productHex, /^0x[0-9a-fA-F]{8}$/),
    build: oneOf('build', source.build, ['production', 'debug'], d.build),
    uuid: text('uuid', source.uuid, d.uuid, /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/),
    crypto: oneOf('crypto', source.crypto, ['psa', 'pure'], d.crypto),
    sntpHost: text('sntp', source.sntp, d.sntpHost, /^[A-Za-z0-9.-]{1,253}$/),
    console: {
      port: integer('console.port', c.port, d.console.port, 0, 2),
      transmit: integer('console.transmit', c.transmit, d.console.transmit, 0, 48),
      receive: integer('console.receive', c.receive, d.console.receive, 0, 48),
      baud: integer('console.baud', c.baud, d.console.baud, 9_600, 2_000_000),
      device: text('console.device', c.device, d.console.device, /^\/[A-Za-z0-9._/-]{1,127}$/),
    },
    cloudCaResource: text('cloud_ca', source.cloud_ca, d.cloudCaResource, /^[A-Za-z0-9._-]{1,64}$/),
    // A client has no W5500 whatever the manifest says (DESIGN.md: clients are Wi-Fi only).
    ethernet: role === 'controller' && flag('ethernet', source.ethernet, d.ethernet),
    display: flag('display', source.display, d.display),
    http: httpLimits(source.http, d.http),
    settings: firmwareSettings(source.settings),
    fileRoot: text('file.root', ((source.file ?? {}) as Record<string, unknown>).root, d.fileRoot, /^\/[A-Za-z0-9._/-]{0,127}$/),
  };
}
