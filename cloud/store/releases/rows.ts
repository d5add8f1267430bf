// The release tables as both halves read and write them (firmware_releases, firmware_images, rollouts,
// rollout_outcomes, track_signing): row shapes, their records, column lists. PostgreSQL returns BIGINT
// and count(*) as strings and booleans as booleans, SQLite numbers for all three; both go through here.
import type { FirmwareRelease, HostedImage, OutcomeCounts, OutcomeDevice, ReleaseTrack, Rollout, TrackSigning, TrackSummary } from './types.ts';

export const trackArgs = (t: ReleaseTrack): [string, string, string] => [t.class, t.productHex, t.application];

/** The columns that name a track, in every release table. */
interface TrackColumns {
  class: string;
  product_hex: string;
  application: string;
}

export interface ReleaseRow extends TrackColumns {
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

/** The columns a new release is written with, in the order of releaseValues. */
export const RELEASE_COLUMNS = ['class', 'product_hex', 'application', 'version', 'status', 'released_at', 'revoked_at', 'url', 'size', 'sha256', 'hosted', 'chip', 'project', 'signed_block', 'signed_key_digest'] as const;

/** A new release's row, in the order of RELEASE_COLUMNS; `hosted` as each database spells a boolean. */
export function releaseValues<B>(r: FirmwareRelease, hosted: B): unknown[] {
  return [...trackArgs(r), r.version, r.status, r.releasedAt, r.revokedAt ?? null, r.url ?? null, r.size ?? null, r.sha256 ?? null, hosted, r.chip ?? null, r.project ?? null, r.signedBy?.block ?? null, r.signedBy?.keyDigest ?? null];
}

/** A hosted image joined with its release's status. */
export interface ImageRow {
  sha256: string;
  size: number;
  bytes: Buffer;
  status: 'RELEASED' | 'REVOKED';
  released_at: string;
}

export function imageFromRow(r: ImageRow): HostedImage {
  return { bytes: r.bytes, sha256: r.sha256, size: r.size, status: r.status, releasedAt: r.released_at };
}

export interface RolloutRow extends TrackColumns {
  version: string;
  percent: number | string;
  groups: string;
  state: 'active' | 'paused';
  step_percent: number | string | null;
  step_every_seconds: number | string | null;
  error_threshold_percent: number | string;
  min_reports: number | string;
  health_margin: number | null;
  health_min_device_hours: number | string;
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
  'health_margin',
  'health_min_device_hours',
  'anchor_at_ms',
  'paused_reason',
  'created_at',
  'updated_at',
] as const;

/** Creates or replaces a rollout (ROLLOUT_COLUMNS, rolloutValues); `placeholder(n)` writes the n-th parameter, 1-based. */
export function upsertRolloutSql(placeholder: (n: number) => string): string {
  const replaced = ROLLOUT_COLUMNS.filter((c) => !['class', 'product_hex', 'application', 'version', 'created_at'].includes(c));
  return `INSERT INTO rollouts (${ROLLOUT_COLUMNS.join(', ')}) VALUES (${ROLLOUT_COLUMNS.map((_, i) => placeholder(i + 1)).join(', ')})
    ON CONFLICT (class, product_hex, application, version) DO UPDATE SET ${replaced.map((c) => `${c} = excluded.${c}`).join(', ')}`;
}

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
    healthMargin: r.health_margin === null ? null : Number(r.health_margin),
    healthMinDeviceHours: Number(r.health_min_device_hours),
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
    r.healthMargin,
    r.healthMinDeviceHours,
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

export interface TrackRow extends TrackColumns {
  released: number | string;
  revoked: number | string;
  latest: string | null;
}

export function trackFromRow(r: TrackRow): TrackSummary {
  return { class: r.class, productHex: r.product_hex, application: r.application, released: Number(r.released), revoked: Number(r.revoked), latest: r.latest };
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

/** A row of rollout_outcomes as both halves read it. */
export interface OutcomeDeviceRow {
  uuid: string;
  outcome: OutcomeDevice['outcome'];
  from_version: string;
  offered_at: string;
  settled_at: string | null;
  attempts: number | string;
}

export const outcomeDeviceFromRow = (r: OutcomeDeviceRow): OutcomeDevice => ({
  uuid: r.uuid,
  outcome: r.outcome,
  fromVersion: r.from_version,
  offeredAt: r.offered_at,
  settledAt: r.settled_at,
  attempts: Number(r.attempts),
});

/**
 * The devices of one release's outcomes, one kind or all (`outcome` null), by UUID after a cursor.
 * `p(n)` writes the n-th placeholder; the values are those of outcomeDevicesValues.
 */
export const outcomeDevicesSql = (track: string, p: (n: number) => string) =>
  `SELECT uuid, outcome, from_version, offered_at, settled_at, attempts FROM rollout_outcomes
   WHERE ${track} AND version = ${p(4)} AND (CAST(${p(5)} AS TEXT) IS NULL OR outcome = ${p(6)}) AND uuid > ${p(7)}
   ORDER BY uuid LIMIT ${p(8)}`;

export const outcomeDevicesValues = (t: ReleaseTrack, version: string, o: { outcome?: string; after?: string; limit: number }): unknown[] => [
  ...trackArgs(t),
  version,
  o.outcome ?? null,
  o.outcome ?? null,
  o.after ?? '',
  o.limit,
];
