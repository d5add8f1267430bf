// A client's configuration (spec 2.6: the client record is the client's whole configuration, with its
// Wi-Fi credentials, MQTT settings and CA certificate): what makes one usable, checked when a record
// is written through the API, when a client receives one (spec 3.5 step 5) and at boot (spec 3.5
// step 1: a configuration the client cannot use sends it back to provisioning). docs/firmware-records.md.
import type { Hal } from '../hal/index.ts';
import { base64Decode, utf8Encode } from './bytes.ts';
import { parseJson } from './json-validator.ts';
import type { RecordStore } from './records.ts';

export interface ClientConfiguration {
  wifi: { ssid: string; password: string };
  /** `tls: false` selects a plaintext broker (a bench's loopback broker); TLS with the CA otherwise. */
  mqtt: { host: string; port: number; username?: string; password?: string; client_id?: string; tls?: boolean };
  /** PEM, one or more CERTIFICATE blocks: the CA the client trusts for MQTT over TLS. */
  ca_certificate: string;
}

/** Why a value is not a usable client configuration: the field (dotted path) and what is wrong. */
export interface ConfigurationProblem {
  field: string;
  reason: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// A DNS host name: 1 to 253 characters, labels of 1 to 63 letters, digits and inner hyphens. The
// lengths are checked in code, not with {0,61} in the pattern: XS's RegExp ignores the bound of a
// counted repeat inside an optional group (/^a(?:a{0,61}a)?$/ matches 100 a's there), so such a
// pattern let a 64-character label through on the device.
// The RegExps here are made at each call, never at module level: a module-level RegExp is preloaded,
// and XS 8.2.3 corrupts memory when it runs one (docs/moddable-regexp.md).
const isHostName = (host: string): boolean => {
  const label = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
  return host.length >= 1 && host.length <= 253 && host.split('.').every((l) => l.length <= 63 && label.test(l));
};
const isIpv6Literal = (host: string): boolean => /^\[[0-9A-Fa-f:.]{2,45}\]$/.test(host);
const MAX_CA_BYTES = 8192;

/**
 * Whether a text is PEM-shaped certificates (RFC 7468): one or more CERTIFICATE blocks and nothing
 * but white space around them, each a strict Base64 body that decodes to a DER SEQUENCE whose length
 * is the body's and which starts with another SEQUENCE (an X.509 TBSCertificate). Not a chain or a
 * signature check: the TLS stack does that at connection time.
 */
export function pemCertificateProblem(text: unknown): string | null {
  if (typeof text !== 'string' || text.trim() === '') return 'is missing (a PEM CA certificate)';
  if (text.length > MAX_CA_BYTES) return `is longer than ${MAX_CA_BYTES} characters`;
  let blocks = 0;
  let rest = text;
  for (const m of text.matchAll(/-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END CERTIFICATE-----/g)) {
    blocks++;
    rest = rest.replace(m[0], '');
    let der: Uint8Array;
    try {
      der = base64Decode(m[1]!.replace(/[\r\n]/g, ''));
    } catch {
      return `block ${blocks} is not Base64`;
    }
    if (!derSequenceOfLength(der)) return `block ${blocks} is not a DER certificate`;
  }
  if (blocks === 0) return 'is not PEM (no -----BEGIN CERTIFICATE----- block)';
  if (rest.trim() !== '') return 'has text outside its CERTIFICATE blocks';
  return null;
}

/** A DER SEQUENCE (0x30) that fills the buffer exactly and whose first element is a SEQUENCE. */
function derSequenceOfLength(der: Uint8Array): boolean {
  if (der.length < 4 || der[0] !== 0x30) return false;
  let length = der[1]!;
  let header = 2;
  if (length & 0x80) {
    const n = length & 0x7f;
    if (n < 1 || n > 3 || der.length < 2 + n) return false;
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + der[2 + i]!;
    header = 2 + n;
  }
  return header + length === der.length && der[header] === 0x30;
}

/**
 * What makes a client configuration valid (spec 2.6; docs/firmware-records.md): the site Wi-Fi
 * (SSID 1-32 bytes, a WPA2 passphrase of 8-63 printable characters or 64 hex digits), the MQTT
 * broker (host name or IP literal, port 1-65535, optional username, password, client_id, tls) and
 * a PEM CA certificate. Null when valid; otherwise the first problem, naming its field.
 */
export function clientConfigurationProblem(value: unknown): ConfigurationProblem | null {
  if (!isObject(value)) return { field: 'record', reason: 'is not a JSON object' };
  const wifi = value.wifi;
  if (!isObject(wifi)) return { field: 'wifi', reason: 'is missing (an object with ssid and password)' };
  if (typeof wifi.ssid !== 'string' || utf8Encode(wifi.ssid).length < 1 || utf8Encode(wifi.ssid).length > 32) return { field: 'wifi.ssid', reason: 'must be a string of 1 to 32 bytes' };
  if (typeof wifi.password !== 'string' || !(/^[\x20-\x7e]{8,63}$/.test(wifi.password) || /^[0-9A-Fa-f]{64}$/.test(wifi.password))) {
    return { field: 'wifi.password', reason: 'must be a WPA2 passphrase (8 to 63 printable ASCII characters, or 64 hex digits)' };
  }
  const mqtt = value.mqtt;
  if (!isObject(mqtt)) return { field: 'mqtt', reason: 'is missing (an object with host and port)' };
  if (typeof mqtt.host !== 'string' || !(isHostName(mqtt.host) || isIpv6Literal(mqtt.host))) return { field: 'mqtt.host', reason: 'must be a host name or an IP address' };
  if (typeof mqtt.port !== 'number' || !Number.isInteger(mqtt.port) || mqtt.port < 1 || mqtt.port > 65535) return { field: 'mqtt.port', reason: 'must be an integer from 1 to 65535' };
  for (const key of ['username', 'password'] as const) {
    if (mqtt[key] !== undefined && (typeof mqtt[key] !== 'string' || (mqtt[key] as string).length > 256)) return { field: `mqtt.${key}`, reason: 'must be a string of at most 256 characters' };
  }
  if (mqtt.client_id !== undefined && (typeof mqtt.client_id !== 'string' || !/^[\x21-\x7e]{1,64}$/.test(mqtt.client_id))) return { field: 'mqtt.client_id', reason: 'must be 1 to 64 printable ASCII characters' };
  if (mqtt.tls !== undefined && typeof mqtt.tls !== 'boolean') return { field: 'mqtt.tls', reason: 'must be true or false' };
  const ca = pemCertificateProblem(value.ca_certificate);
  if (ca) return { field: 'ca_certificate', reason: ca };
  return null;
}

/** The client's own stored configuration: valid, invalid (and why), or absent. */
export function storedClientConfiguration(ctx: { hal: Hal; records: RecordStore }): { config?: ClientConfiguration; problem?: ConfigurationProblem } {
  const uuid = ctx.hal.system.identity().uuid;
  if (!ctx.records.has('clients', uuid)) return {};
  const text = ctx.records.getText('clients', uuid);
  let value: unknown;
  try {
    value = text === null ? null : parseJson(text);
  } catch {
    value = null;
  }
  if (text === null || value === null) return { problem: { field: 'record', reason: 'cannot be read (damaged or not JSON)' } };
  const problem = clientConfigurationProblem(value);
  return problem ? { problem } : { config: value as ClientConfiguration };
}
