// Rows as both stores read them, to the records of types.ts. PostgreSQL returns BIGINT columns as
// strings, SQLite as numbers; both go through here.
import type { ConsoleSessionRecord, Deployment, DeviceRecord, FirmwareRelease } from './types.ts';

export interface ReleaseRow {
  class: string;
  product_hex: string;
  application: string;
  version: string;
  status: 'RELEASED' | 'REVOKED';
  released_at: string;
  revoked_at: string | null;
  url: string | null;
  size: number | string | null;
  sha256: string | null;
  hosted?: number | boolean | null;
  chip?: string | null;
  project?: string | null;
  signed_block?: number | string | null;
  signed_key_digest?: string | null;
}

export interface DeploymentRow {
  function_name: string;
  version: number;
  configuration: string;
  started_at_ms: number | string;
  ends_at_ms: number | string;
}

export interface DeviceRow {
  uuid: string;
  public_key_pem: string;
  enrolled_at: string;
  updated_at: string;
  label?: string | null;
}

export function releaseFromRow(r: ReleaseRow): FirmwareRelease {
  const out: FirmwareRelease = { class: r.class, productHex: r.product_hex, application: r.application, version: r.version, status: r.status, releasedAt: r.released_at };
  if (r.revoked_at !== null) out.revokedAt = r.revoked_at;
  if (r.url !== null) out.url = r.url;
  if (r.size !== null) out.size = Number(r.size);
  if (r.sha256 !== null) out.sha256 = r.sha256;
  if (r.hosted) out.hosted = true;
  if (r.chip) out.chip = r.chip;
  if (r.project) out.project = r.project;
  if (r.signed_key_digest) out.signedBy = { block: Number(r.signed_block), keyDigest: r.signed_key_digest };
  return out;
}

export function deploymentFromRow(r: DeploymentRow): Deployment {
  return {
    version: r.version,
    configuration: JSON.parse(r.configuration) as Record<string, unknown>,
    startedAt: new Date(Number(r.started_at_ms)).toISOString(),
    endsAt: new Date(Number(r.ends_at_ms)).toISOString(),
  };
}

export function deviceFromRow(r: DeviceRow): DeviceRecord {
  const d: DeviceRecord = { uuid: r.uuid, publicKeyPem: r.public_key_pem, enrolledAt: r.enrolled_at, updatedAt: r.updated_at };
  if (r.label) d.label = r.label;
  return d;
}

export interface ConsoleSessionRow {
  id_hash: string;
  subject: string | null;
  groups: string;
  csrf_hash: string;
  created_at: string;
  expires_at_ms: number | string;
}

export function consoleSessionFromRow(r: ConsoleSessionRow): ConsoleSessionRecord {
  return {
    idHash: r.id_hash,
    subject: r.subject,
    groups: JSON.parse(r.groups) as string[],
    csrfHash: r.csrf_hash,
    createdAt: r.created_at,
    expiresAtMs: Number(r.expires_at_ms),
  };
}

/** The row's values in the order of CONSOLE_SESSION_COLUMNS. */
export function consoleSessionValues(s: ConsoleSessionRecord): [string, string | null, string, string, string, number] {
  return [s.idHash, s.subject, JSON.stringify(s.groups), s.csrfHash, s.createdAt, s.expiresAtMs];
}

export const CONSOLE_SESSION_COLUMNS = 'id_hash, subject, groups, csrf_hash, created_at, expires_at_ms';
