// The fleet-operations tables as both stores read them (hosted images, rollouts and their outcomes,
// the device inventory, the audit log): row shapes, their records, and the one inventory query, written
// once with the placeholder style of each database. PostgreSQL returns BIGINT and count(*) as strings,
// SQLite as numbers; both go through here.
import type { AuditEntry, InventoryFilter, InventoryRecord, OtaCheckState, OutcomeCounts, Rollout, TrackSigning, TrackSummary } from './types.ts';

export interface RolloutRow {
  class: string;
  product_hex: string;
  application: string;
  version: string;
  percent: number | string;
  groups: string;
  state: 'active' | 'paused';
  step_percent: number | string | null;
  step_every_seconds: number | string | null;
  error_threshold_percent: number | string;
  min_reports: number | string;
  anchor_at_ms: number | string;
  paused_reason: string | null;
  created_at: string;
  updated_at: string;
}

export const ROLLOUT_COLUMNS = [
  'class',
  'product_hex',
  'application',
  'version',
  'percent',
  'groups',
  'state',
  'step_percent',
  'step_every_seconds',
  'error_threshold_percent',
  'min_reports',
  'anchor_at_ms',
  'paused_reason',
  'created_at',
  'updated_at',
] as const;

const numOrNull = (v: number | string | null) => (v === null ? null : Number(v));

export function rolloutFromRow(r: RolloutRow): Rollout {
  return {
    class: r.class,
    productHex: r.product_hex,
    application: r.application,
    version: r.version,
    percent: Number(r.percent),
    groups: JSON.parse(r.groups) as string[],
    state: r.state,
    stepPercent: numOrNull(r.step_percent),
    stepEverySeconds: numOrNull(r.step_every_seconds),
    errorThresholdPercent: Number(r.error_threshold_percent),
    minReports: Number(r.min_reports),
    anchorAtMs: Number(r.anchor_at_ms),
    pausedReason: r.paused_reason,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The values of ROLLOUT_COLUMNS, in order. */
export function rolloutValues(r: Rollout): unknown[] {
  return [
    r.class,
    r.productHex,
    r.application,
    r.version,
    r.percent,
    JSON.stringify(r.groups),
    r.state,
    r.stepPercent,
    r.stepEverySeconds,
    r.errorThresholdPercent,
    r.minReports,
    r.anchorAtMs,
    r.pausedReason,
    r.createdAt,
    r.updatedAt,
  ];
}

/** The columns updateRollout may change, with how a value is written. */
export const ROLLOUT_CHANGES: Record<string, { column: string; value: (v: unknown) => unknown }> = {
  state: { column: 'state', value: (v) => v },
  percent: { column: 'percent', value: (v) => v },
  anchorAtMs: { column: 'anchor_at_ms', value: (v) => v },
  pausedReason: { column: 'paused_reason', value: (v) => v },
  groups: { column: 'groups', value: (v) => JSON.stringify(v) },
  stepPercent: { column: 'step_percent', value: (v) => v },
  stepEverySeconds: { column: 'step_every_seconds', value: (v) => v },
  updatedAt: { column: 'updated_at', value: (v) => v },
};

export function outcomeCountsFromRows(rows: { outcome: string; n: number | string }[]): OutcomeCounts {
  const counts: OutcomeCounts = { pending: 0, succeeded: 0, failed: 0 };
  for (const r of rows) if (r.outcome in counts) counts[r.outcome as keyof OutcomeCounts] = Number(r.n);
  return counts;
}

export interface TrackRow {
  class: string;
  product_hex: string;
  application: string;
  released: number | string;
  revoked: number | string;
  latest: string | null;
}

export function trackFromRow(r: TrackRow): TrackSummary {
  return { class: r.class, productHex: r.product_hex, application: r.application, released: Number(r.released), revoked: Number(r.revoked), latest: r.latest };
}

export interface AuditRow {
  id: number | string;
  at: string;
  actor: string;
  via: AuditEntry['via'];
  action: string;
  method: string;
  path: string;
  status: number | string;
  details: string | null;
}

export function auditFromRow(r: AuditRow): AuditEntry {
  return {
    id: Number(r.id),
    at: r.at,
    actor: r.actor,
    via: r.via,
    action: r.action,
    method: r.method,
    path: r.path,
    status: Number(r.status),
    details: r.details === null ? null : (JSON.parse(r.details) as Record<string, unknown>),
  };
}

export interface InventoryRow {
  uuid: string;
  public_key_pem: string;
  enrolled_at: string;
  updated_at: string;
  label: string | null;
  last_check_at: string | null;
  last_check_version: string | null;
  last_check_class: string | null;
  last_check_product_hex: string | null;
  last_check_application: string | null;
  offered_version: string | null;
  offered_from: string | null;
  offered_at: string | null;
  backup_size: number | string | null;
  backup_etag: string | null;
  last_backup_date: string | null;
}

export function inventoryFromRow(r: InventoryRow, groups: string[]): InventoryRecord {
  return {
    uuid: r.uuid,
    publicKeyPem: r.public_key_pem,
    enrolledAt: r.enrolled_at,
    updatedAt: r.updated_at,
    ...(r.label !== null ? { label: r.label } : {}),
    groups,
    lastCheck:
      r.last_check_at === null
        ? null
        : { at: r.last_check_at, version: r.last_check_version!, track: { class: r.last_check_class!, productHex: r.last_check_product_hex!, application: r.last_check_application! } },
    offer: r.offered_version === null ? null : { version: r.offered_version, fromVersion: r.offered_from!, at: r.offered_at! },
    backup: r.last_backup_date === null ? null : { size: Number(r.backup_size), etag: r.backup_etag, lastBackupDate: r.last_backup_date },
  };
}

/** The inventory columns of one device as its OTA check state. */
export function otaStateFromRow(r: Pick<InventoryRow, 'uuid' | 'last_check_at' | 'last_check_class' | 'last_check_product_hex' | 'last_check_application' | 'offered_version' | 'offered_from' | 'offered_at'>): OtaCheckState {
  return {
    uuid: r.uuid,
    lastCheckAt: r.last_check_at,
    offer:
      r.offered_version === null || r.last_check_class === null
        ? null
        : {
            track: { class: r.last_check_class, productHex: r.last_check_product_hex!, application: r.last_check_application! },
            version: r.offered_version,
            fromVersion: r.offered_from!,
            at: r.offered_at!,
          },
  };
}

/** `%`, `_` and `\` matched as themselves in a LIKE pattern (with ESCAPE '\'). */
function likeContaining(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The inventory with its filters, as one query (stragglers included: "not seen since" and "no backup
 * since" are two conditions of the same WHERE). `placeholder(n)` writes the n-th parameter (1-based):
 * `?` for SQLite, `$n` for PostgreSQL; `collate` orders UUIDs bytewise on PostgreSQL as on SQLite.
 */
export function inventoryQuery(f: InventoryFilter, placeholder: (n: number) => string, collate = ''): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return placeholder(params.length);
  };
  const where: string[] = [];
  if (f.uuid !== undefined) where.push(`d.uuid = ${p(f.uuid)}`);
  if (f.class !== undefined) where.push(`i.last_check_class = ${p(f.class)}`);
  if (f.productHex !== undefined) where.push(`i.last_check_product_hex = ${p(f.productHex)}`);
  if (f.application !== undefined) where.push(`i.last_check_application = ${p(f.application)}`);
  if (f.version !== undefined) where.push(`i.last_check_version = ${p(f.version)}`);
  if (f.notSeenSince !== undefined) where.push(`(i.last_check_at IS NULL OR i.last_check_at < ${p(f.notSeenSince)})`);
  if (f.noBackupSince !== undefined) where.push(`(b.last_backup_date IS NULL OR b.last_backup_date < ${p(f.noBackupSince)})`);
  if (f.search !== undefined) {
    const pattern = likeContaining(f.search);
    where.push(`(lower(d.uuid) LIKE ${p(pattern)} ESCAPE '\\' OR lower(COALESCE(d.label, '')) LIKE ${p(pattern)} ESCAPE '\\')`);
  }
  if (f.group !== undefined) where.push(`EXISTS (SELECT 1 FROM device_groups g WHERE g.uuid = d.uuid AND g.group_name = ${p(f.group)})`);
  if (f.after !== undefined) where.push(`d.uuid${collate} > ${p(f.after)}`);
  const sql = `SELECT d.uuid, d.public_key_pem, d.enrolled_at, d.updated_at, d.label,
      i.last_check_at, i.last_check_version, i.last_check_class, i.last_check_product_hex, i.last_check_application,
      i.offered_version, i.offered_from, i.offered_at,
      b.size AS backup_size, b.etag AS backup_etag, b.last_backup_date
    FROM devices d
    LEFT JOIN device_inventory i ON i.uuid = d.uuid
    LEFT JOIN backups b ON b.uuid = d.uuid
    ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY d.uuid${collate} LIMIT ${p(f.limit)}`;
  return { sql, params };
}

/** Groups by device, from `(uuid, group_name)` rows. */
export function groupsByDevice(rows: { uuid: string; group_name: string }[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(r.uuid) ?? [];
    list.push(r.group_name);
    out.set(r.uuid, list);
  }
  for (const list of out.values()) list.sort();
  return out;
}

/** A track's signing setting as both stores keep it (table track_signing): the keys as JSON. */
export interface TrackSigningRow {
  required: number | boolean;
  keys: string;
  updated_at: string;
}

export function signingFromRow(r: TrackSigningRow): TrackSigning {
  return { required: r.required === true || r.required === 1, keys: JSON.parse(r.keys) as TrackSigning['keys'], updatedAt: r.updated_at };
}

/** The keys column: digest and label only, in order. */
export function signingKeysJson(s: TrackSigning): string {
  return JSON.stringify(s.keys.map((k) => (k.label === undefined ? { digest: k.digest } : { digest: k.digest, label: k.label })));
}
