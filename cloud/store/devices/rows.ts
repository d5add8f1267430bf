// The device tables as both halves read them (devices, device_groups, device_inventory, with the
// device's backup for the inventory): row shapes, their records, and the one inventory query, written
// once with the placeholder style of each database. PostgreSQL returns BIGINT as strings, SQLite as
// numbers; both go through here.
import { deviceHealthFromRow, INVENTORY_HEALTH_COLUMNS } from '../health/rows.ts';
import type { DeviceRecord, InventoryFilter, InventoryRecord, OtaCheckState, TrackFilter, VersionCount } from './types.ts';

export interface DeviceRow {
  uuid: string;
  public_key_pem: string;
  enrolled_at: string;
  updated_at: string;
  label?: string | null;
}

export function deviceFromRow(r: DeviceRow): DeviceRecord {
  const d: DeviceRecord = { uuid: r.uuid, publicKeyPem: r.public_key_pem, enrolledAt: r.enrolled_at, updatedAt: r.updated_at };
  if (r.label) d.label = r.label;
  return d;
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
  /** The device's health state (health_devices), each column as health_<column>. */
  [health: `health_${string}`]: unknown;
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
    health: deviceHealthFromRow(r),
  };
}

export type OtaStateRow = Pick<InventoryRow, 'uuid' | 'last_check_at' | 'last_check_class' | 'last_check_product_hex' | 'last_check_application' | 'offered_version' | 'offered_from' | 'offered_at'>;

/** The OTA check states of enrolled devices; each half adds how it matches a list of UUIDs. */
export const OTA_STATES_OF = `SELECT d.uuid, i.last_check_at, i.last_check_class, i.last_check_product_hex, i.last_check_application,
    i.offered_version, i.offered_from, i.offered_at
  FROM devices d LEFT JOIN device_inventory i ON i.uuid = d.uuid WHERE d.uuid`;

/** The inventory columns of one device as its OTA check state. */
export function otaStateFromRow(r: OtaStateRow): OtaCheckState {
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
 * since" are two conditions of the same WHERE, both or either with `match: 'any'`). `placeholder(n)` writes the n-th parameter (1-based):
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
  // The conditions: every one given, or (match 'any') at least one; the other filters always apply.
  const conditions: string[] = [];
  if (f.notSeenSince !== undefined) conditions.push(`(i.last_check_at IS NULL OR i.last_check_at < ${p(f.notSeenSince)})`);
  if (f.noBackupSince !== undefined) conditions.push(`(b.last_backup_date IS NULL OR b.last_backup_date < ${p(f.noBackupSince)})`);
  if (f.crashedSince !== undefined) conditions.push(`h.crash_at >= ${p(f.crashedSince)}`);
  if (f.lowHeapBelow !== undefined) conditions.push(`h.heap_block < ${p(f.lowHeapBelow)}`);
  // Versions are YYYY.MM.bb: text order is release order.
  if (f.behind) {
    conditions.push(`i.last_check_version < (SELECT max(r.version) FROM firmware_releases r WHERE r.class = i.last_check_class
      AND r.product_hex = i.last_check_product_hex AND r.application = i.last_check_application AND r.status = 'RELEASED')`);
  }
  if (f.failedUpdate) {
    conditions.push(`EXISTS (SELECT 1 FROM rollout_outcomes o WHERE o.uuid = d.uuid AND o.outcome = 'failed'
      AND o.offered_at = (SELECT max(o2.offered_at) FROM rollout_outcomes o2 WHERE o2.uuid = d.uuid))`);
  }
  if (f.match === 'any' && conditions.length > 1) where.push(`(${conditions.join(' OR ')})`);
  else where.push(...conditions);
  if (f.search !== undefined) {
    const pattern = likeContaining(f.search);
    where.push(`(lower(d.uuid) LIKE ${p(pattern)} ESCAPE '\\' OR lower(COALESCE(d.label, '')) LIKE ${p(pattern)} ESCAPE '\\')`);
  }
  if (f.group !== undefined) where.push(`EXISTS (SELECT 1 FROM device_groups g WHERE g.uuid = d.uuid AND g.group_name = ${p(f.group)})`);
  if (f.after !== undefined) where.push(`d.uuid${collate} > ${p(f.after)}`);
  const sql = `SELECT d.uuid, d.public_key_pem, d.enrolled_at, d.updated_at, d.label,
      i.last_check_at, i.last_check_version, i.last_check_class, i.last_check_product_hex, i.last_check_application,
      i.offered_version, i.offered_from, i.offered_at,
      b.size AS backup_size, b.etag AS backup_etag, b.last_backup_date, ${INVENTORY_HEALTH_COLUMNS}
    FROM devices d
    LEFT JOIN device_inventory i ON i.uuid = d.uuid
    LEFT JOIN backups b ON b.uuid = d.uuid
    LEFT JOIN health_devices h ON h.uuid = d.uuid
    ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY d.uuid${collate} LIMIT ${p(f.limit)}`;
  return { sql, params };
}

export interface VersionCountRow {
  class: string;
  product_hex: string;
  application: string;
  version: string;
  devices: number | string;
  status: string | null;
}

/**
 * Devices per version per track, as one query over the inventory (a device that never checked has no
 * row there), each version with its release's status. Versions are YYYY.MM.bb: text order is release
 * order, newest first. `placeholder` and `collate` as for inventoryQuery.
 */
export function versionCountQuery(f: TrackFilter, placeholder: (n: number) => string, collate = ''): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return placeholder(params.length);
  };
  const where: string[] = [];
  if (f.class !== undefined) where.push(`i.last_check_class = ${p(f.class)}`);
  if (f.productHex !== undefined) where.push(`i.last_check_product_hex = ${p(f.productHex)}`);
  if (f.application !== undefined) where.push(`i.last_check_application = ${p(f.application)}`);
  const sql = `SELECT i.last_check_class AS class, i.last_check_product_hex AS product_hex, i.last_check_application AS application,
      i.last_check_version AS version, count(*) AS devices, r.status
    FROM device_inventory i
    LEFT JOIN firmware_releases r ON r.class = i.last_check_class AND r.product_hex = i.last_check_product_hex
      AND r.application = i.last_check_application AND r.version = i.last_check_version
    ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    GROUP BY i.last_check_class, i.last_check_product_hex, i.last_check_application, i.last_check_version, r.status
    ORDER BY i.last_check_class${collate}, i.last_check_product_hex${collate}, i.last_check_application${collate}, i.last_check_version${collate} DESC`;
  return { sql, params };
}

export function versionCountFromRow(r: VersionCountRow): VersionCount {
  return {
    track: { class: r.class, productHex: r.product_hex, application: r.application },
    version: r.version,
    devices: Number(r.devices),
    status: r.status === 'RELEASED' || r.status === 'REVOKED' ? r.status : null,
  };
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
