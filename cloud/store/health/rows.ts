// The health tables as both halves read and write them (health_reports, health_devices, health_daily,
// health_outcomes): the row shapes, what one report writes (planIngest: the counting rules of
// docs/device-health.md, Definitions, in one place), and the statements both write alike, with each
// database's placeholders. PostgreSQL returns BIGINT, count(*) and sum() as strings, SQLite as numbers.
import {
  CRASH_KINDS,
  dayOf,
  HEALTH_DAYS_KEPT,
  HEALTH_REPORTS_KEPT,
  isUnexpected,
  UNEXPECTED_REASONS,
  type BootReason,
  type CrashKind,
  type UnexpectedReason,
} from '../../health-definitions.ts';
import type { ReleaseTrack } from '../releases/types.ts';
import type { DeviceHealthState, FleetHealthTotals, HealthDay, HealthIngest, HealthReport, ReleaseHealthFigures, StoredHealthReport } from './types.ts';

type Num = number | string;
type Placeholder = (n: number) => string;

/** One device's latest state (health_devices): the inventory's health, and what the next report is counted from. */
export interface HealthStateRow {
  uuid: string;
  last_seq: Num;
  /** Reports up to this seq were stored and pruned: the same seq again is not stored twice. */
  pruned_through: Num | null;
  last_received_at: string;
  last_up: Num;
  last_fw: string;
  last_day: string;
  boot_at: string | null;
  boot_reason: string | null;
  boot_version: string | null;
  crash_at: string | null;
  crash_kind: string | null;
  crash_message: string | null;
  crash_version: string | null;
  heartbeat_at: string | null;
  heap_block: Num | null;
  heap_min: Num | null;
  rssi: Num | null;
  dropped: Num | null;
}

export const STATE_COLUMNS = [
  'uuid',
  'last_seq',
  'pruned_through',
  'last_received_at',
  'last_up',
  'last_fw',
  'last_day',
  'boot_at',
  'boot_reason',
  'boot_version',
  'crash_at',
  'crash_kind',
  'crash_message',
  'crash_version',
  'heartbeat_at',
  'heap_block',
  'heap_min',
  'rssi',
  'dropped',
] as const satisfies readonly (keyof HealthStateRow)[];

const REBOOT_COLUMNS = UNEXPECTED_REASONS.map((r) => `reboots_${r}`);
const CRASH_COLUMNS = CRASH_KINDS.map((k) => `crashes_${k}`);
/** The daily counts, added up on conflict. */
const SUMMED = ['reports', 'boots', 'heartbeats', 'device_seconds', ...REBOOT_COLUMNS, ...CRASH_COLUMNS];
/** The daily lowest values, the lower kept on conflict. */
const LOWEST = ['heap_min', 'block_min', 'rssi_min'];
const DAY_COLUMNS = ['uuid', 'version', 'day', ...SUMMED, ...LOWEST];
const OUTCOME_COLUMNS = ['uuid', 'version', 'seq', 'outcome', 'reason', 'detail', 'from_version', 'at'];

/** What one day of one version gains from a report (a row of health_daily to add up). */
export type DayRow = Record<(typeof DAY_COLUMNS)[number], string | number | null>;

export interface OutcomeRow {
  version: string;
  seq: number;
  outcome: string;
  reason: string | null;
  detail: string | null;
  from_version: string;
  at: string;
}

/** What storing one report writes, decided from the device's state before it. */
export interface IngestPlan {
  /** The health_reports row's values: uuid, seq, kind, received_at, fw, up, body. */
  report: unknown[];
  days: DayRow[];
  /** The device's new state (pruned_through as it was: the retention step may raise it). */
  state: HealthStateRow;
  outcome: OutcomeRow | null;
  unexpectedOn: string | null;
  /** The day changed since the device's last report: its days before the last HEALTH_DAYS_KEPT (today one of them) are pruned. */
  pruneDaysBefore: string | null;
}

function emptyDay(uuid: string, version: string, day: string): DayRow {
  const row: DayRow = { uuid, version, day, heap_min: null, block_min: null, rssi_min: null };
  for (const c of SUMMED) row[c] = 0;
  return row;
}

function freshState(uuid: string): HealthStateRow {
  const row = Object.fromEntries(STATE_COLUMNS.map((c) => [c, null])) as Record<string, unknown>;
  return { ...row, uuid } as HealthStateRow;
}

/** ISO 8601 as the store keeps it (toISOString), so that times compare as strings. */
const normalIso = (iso: string) => new Date(iso).toISOString();

/**
 * What a report adds, given its device's state before it (null: its first report). The rules of
 * docs/device-health.md, Definitions:
 * - device-seconds credited to the report's `fw`: its `up` minus the previous report's when both are of
 *   one run (not a boot report, same `fw`, `up` not smaller), else its `up` (the run began at boot);
 *   nothing for a report older (by seq) than the device's newest;
 * - an unexpected reboot (reason watchdog, abort, panic, brownout or unknown) is counted against the
 *   version that was running when it happened: the image the bootloader went back from
 *   (`rolled_back.version`), else the `fw` of the device's previous report, else the report's own `fw`;
 * - an update report sets the device's outcome for its `version`; a boot that says the bootloader went
 *   back sets `failed` with reason `rolled_back` for that version.
 */
export function planIngest(uuid: string, prev: HealthStateRow | null, r: HealthReport, receivedAt: string): IngestPlan {
  const day = dayOf(receivedAt);
  const inOrder = prev === null || r.seq > Number(prev.last_seq);
  const sameRun = prev !== null && r.kind !== 'boot' && r.fw === prev.last_fw && r.up >= Number(prev.last_up);
  const credit = !inOrder ? 0 : sameRun ? r.up - Number(prev.last_up) : r.up;
  const own = emptyDay(uuid, r.fw, day);
  own.reports = 1;
  own.device_seconds = credit;
  const days = [own];
  const state: HealthStateRow = prev ? { ...prev } : freshState(uuid);
  if (inOrder) Object.assign(state, { last_seq: r.seq, last_received_at: receivedAt, last_up: r.up, last_fw: r.fw, last_day: day });
  const at = r.at === null ? receivedAt : normalIso(r.at);
  let unexpectedOn: string | null = null;
  let outcome: OutcomeRow | null = null;
  if (r.kind === 'boot') {
    own.boots = 1;
    if (inOrder) Object.assign(state, { boot_at: at, boot_reason: r.reason, boot_version: r.fw, dropped: r.dropped ?? state.dropped });
    if (isUnexpected(r.reason)) {
      unexpectedOn = r.rolled_back?.version ?? (inOrder && prev ? prev.last_fw : r.fw);
      const counted = unexpectedOn === r.fw ? own : emptyDay(uuid, unexpectedOn, day);
      if (counted !== own) days.push(counted);
      counted[`reboots_${r.reason}`] = 1;
      if (r.crash) counted[`crashes_${r.crash.kind}`] = 1;
      if (inOrder) Object.assign(state, { crash_at: at, crash_kind: r.crash?.kind ?? r.reason, crash_message: r.crash?.message ?? null, crash_version: unexpectedOn });
    }
    if (r.rolled_back) outcome = { version: r.rolled_back.version, seq: r.seq, outcome: 'failed', reason: 'rolled_back', detail: null, from_version: r.fw, at: receivedAt };
  } else if (r.kind === 'heartbeat') {
    Object.assign(own, { heartbeats: 1, heap_min: r.heap_min, block_min: r.block, rssi_min: r.rssi });
    if (inOrder) Object.assign(state, { heartbeat_at: at, heap_block: r.block, heap_min: r.heap_min, rssi: r.rssi, dropped: r.dropped ?? state.dropped });
  } else {
    outcome = { version: r.version, seq: r.seq, outcome: r.outcome, reason: r.reason ?? null, detail: r.detail ?? null, from_version: r.fw, at: receivedAt };
  }
  const firstOfDay = prev === null || prev.last_day !== day;
  return {
    report: [uuid, r.seq, r.kind, receivedAt, r.fw, r.up, JSON.stringify(r)],
    days,
    state,
    outcome,
    unexpectedOn,
    pruneDaysBefore: firstOfDay ? dayOf(new Date(Date.parse(receivedAt) - (HEALTH_DAYS_KEPT - 1) * 86_400_000).toISOString()) : null,
  };
}

/**
 * The statements of the health domain, with a database's placeholders; `lock` is how the ingest's
 * first read of the device row locks it (PostgreSQL; SQLite's IMMEDIATE transaction has the lock).
 */
export function healthSql(p: Placeholder, lock = '') {
  const list = (n: number, from = 1) => Array.from({ length: n }, (_, i) => p(from + i)).join(', ');
  const lower = (c: string) => `${c} = CASE WHEN health_daily.${c} IS NULL OR excluded.${c} < health_daily.${c} THEN excluded.${c} ELSE health_daily.${c} END`;
  return {
    device: `SELECT 1 AS one FROM devices WHERE uuid = ${p(1)}${lock}`,
    state: `SELECT * FROM health_devices WHERE uuid = ${p(1)}`,
    seen: `SELECT 1 AS one FROM health_reports WHERE uuid = ${p(1)} AND seq = ${p(2)}`,
    insertReport: `INSERT INTO health_reports (uuid, seq, kind, received_at, fw, up, body) VALUES (${list(7)})`,
    addDay: `INSERT INTO health_daily (${DAY_COLUMNS.join(', ')}) VALUES (${list(DAY_COLUMNS.length)})
      ON CONFLICT (uuid, version, day) DO UPDATE SET ${[...SUMMED.map((c) => `${c} = health_daily.${c} + excluded.${c}`), ...LOWEST.map(lower)].join(', ')}`,
    putState: `INSERT INTO health_devices (${STATE_COLUMNS.join(', ')}) VALUES (${list(STATE_COLUMNS.length)})
      ON CONFLICT (uuid) DO UPDATE SET ${STATE_COLUMNS.slice(1).map((c) => `${c} = excluded.${c}`).join(', ')}`,
    putOutcome: `INSERT INTO health_outcomes (${OUTCOME_COLUMNS.join(', ')}) VALUES (${list(OUTCOME_COLUMNS.length)})
      ON CONFLICT (uuid, version) DO UPDATE SET ${OUTCOME_COLUMNS.slice(2).map((c) => `${c} = excluded.${c}`).join(', ')}
      WHERE excluded.seq > health_outcomes.seq`,
    /** The newest seq past the ones kept: it and every older one go. */
    pruneFrom: `SELECT seq FROM health_reports WHERE uuid = ${p(1)} ORDER BY seq DESC LIMIT 1 OFFSET ${p(2)}`,
    pruneReports: `DELETE FROM health_reports WHERE uuid = ${p(1)} AND seq <= ${p(2)}`,
    pruneDays: `DELETE FROM health_daily WHERE uuid = ${p(1)} AND day < ${p(2)}`,
    listReports: `SELECT received_at, body FROM health_reports WHERE uuid = ${p(1)} AND seq < ${p(2)} ORDER BY seq DESC LIMIT ${p(3)}`,
    listDays: `SELECT * FROM health_daily WHERE uuid = ${p(1)} AND day >= ${p(2)} ORDER BY day DESC, version DESC`,
    /** The fleet's totals in one query over health_devices. */
    totals: `SELECT (SELECT count(*) FROM devices) AS devices, count(h.uuid) AS reporting,
        COALESCE(sum(CASE WHEN h.crash_at >= ${p(1)} THEN 1 ELSE 0 END), 0) AS crashed,
        COALESCE(sum(CASE WHEN h.heap_block < ${p(2)} THEN 1 ELSE 0 END), 0) AS low_heap,
        COALESCE(sum(h.dropped), 0) AS dropped
      FROM health_devices h`,
  };
}


/** Whether a report's seq is one the device stored before: kept, or pruned since. */
function storedBefore(prev: HealthStateRow | null, seq: number, kept: boolean): boolean {
  return kept || (prev?.pruned_through != null && seq <= Number(prev.pruned_through));
}

export type HealthStatement = keyof ReturnType<typeof healthSql>;

/** The fleet's totals from their row. */
export function totalsFromRow(r: Record<string, unknown>): FleetHealthTotals {
  return { devices: Number(r.devices), reporting: Number(r.reporting), crashed: Number(r.crashed), lowHeap: Number(r.low_heap), dropped: Number(r.dropped) };
}
/** One statement of an ingest; the half that runs it answers with the rows it read (none for a write). */
export interface StoreCall {
  sql: HealthStatement;
  params: unknown[];
}
type Rows = Record<string, unknown>[];

/**
 * Storing one report, written once for both halves as the statements it runs in order (each half runs
 * them in its transaction: SQLite's synchronously, PostgreSQL's awaiting each). Null when the device
 * is not enrolled.
 */
export function* ingestReport(uuid: string, report: HealthReport, receivedAt: string): Generator<StoreCall, HealthIngest | null, Rows> {
  const call = (sql: HealthStatement, ...params: unknown[]): StoreCall => ({ sql, params });
  if ((yield call('device', uuid)).length === 0) return null;
  const prev = ((yield call('state', uuid))[0] ?? null) as HealthStateRow | null;
  const kept = (yield call('seen', uuid, report.seq)).length > 0;
  if (storedBefore(prev, report.seq, kept)) return { stored: false, unexpectedOn: null };
  const plan = planIngest(uuid, prev, report, receivedAt);
  yield call('insertReport', ...plan.report);
  for (const d of plan.days) yield call('addDay', ...DAY_COLUMNS.map((c) => d[c]));
  if (plan.outcome) {
    const o = plan.outcome;
    yield call('putOutcome', uuid, o.version, o.seq, o.outcome, o.reason, o.detail, o.from_version, o.at);
  }
  const cut = (yield call('pruneFrom', uuid, HEALTH_REPORTS_KEPT))[0];
  if (cut) {
    yield call('pruneReports', uuid, cut.seq);
    plan.state.pruned_through = Math.max(Number(cut.seq), Number(plan.state.pruned_through ?? -1));
  }
  if (plan.pruneDaysBefore) yield call('pruneDays', uuid, plan.pruneDaysBefore);
  yield call('putState', ...STATE_COLUMNS.map((c) => plan.state[c]));
  return { stored: true, unexpectedOn: plan.unexpectedOn };
}

const numOrNull = (v: Num | null | undefined) => (v === null || v === undefined ? null : Number(v));

export function storedReportFromRow(r: { received_at: string; body: string }): StoredHealthReport {
  return { receivedAt: r.received_at, report: JSON.parse(r.body) as HealthReport };
}

const counts = <K extends string>(keys: readonly K[], column: (k: K) => string, row: Record<string, unknown>) =>
  Object.fromEntries(keys.map((k) => [k, Number(row[column(k)] ?? 0)])) as Record<K, number>;

export function healthDayFromRow(r: Record<string, unknown>): HealthDay {
  return {
    day: r.day as string,
    version: r.version as string,
    reports: Number(r.reports),
    boots: Number(r.boots),
    heartbeats: Number(r.heartbeats),
    deviceSeconds: Number(r.device_seconds),
    reboots: counts(UNEXPECTED_REASONS, (k) => `reboots_${k}`, r),
    crashes: counts(CRASH_KINDS, (k) => `crashes_${k}`, r),
    heapMin: numOrNull(r.heap_min as Num | null),
    blockMin: numOrNull(r.block_min as Num | null),
    rssiMin: numOrNull(r.rssi_min as Num | null),
  };
}

/** The health columns of the inventory query (health_devices h), and the device's health from them. */
export const INVENTORY_HEALTH_COLUMNS = STATE_COLUMNS.slice(3).map((c) => `h.${c} AS health_${c}`).join(', ');

export function deviceHealthFromRow(r: { [column: `health_${string}`]: unknown }): DeviceHealthState | null {
  const v = (c: (typeof STATE_COLUMNS)[number]) => r[`health_${c}`] as string | null;
  if (v('last_received_at') === null) return null;
  return {
    lastReportAt: v('last_received_at')!,
    lastBoot: v('boot_at') === null ? null : { at: v('boot_at')!, reason: v('boot_reason') as BootReason, version: v('boot_version')! },
    lastCrash: v('crash_at') === null ? null : { at: v('crash_at')!, kind: v('crash_kind') as CrashKind | UnexpectedReason, message: v('crash_message'), version: v('crash_version')! },
    heartbeat: v('heartbeat_at') === null ? null : { at: v('heartbeat_at')!, block: Number(v('heap_block')), heapMin: Number(v('heap_min')), rssi: numOrNull(v('rssi')) },
    dropped: numOrNull(v('dropped')),
  };
}

const TRACK_OF = ['i.last_check_class', 'i.last_check_product_hex', 'i.last_check_application'];

/**
 * Health by release: the daily aggregates of the devices whose last update check was on the track, by
 * track and version; and their update outcomes, counted alike. Each statement with its parameters (in
 * no order: releaseHealthFromRows orders them).
 */
export function releaseHealthSql(filter: { track?: ReleaseTrack; versions?: string[] }, p: Placeholder) {
  const statement = (table: string, select: string, groupBy: string) => {
    const params: unknown[] = [];
    const param = (v: unknown) => (params.push(v), p(params.length));
    const conditions: string[] = [];
    if (filter.track) {
      const t = filter.track;
      conditions.push(...[t.class, t.productHex, t.application].map((v, i) => `${TRACK_OF[i]} = ${param(v)}`));
    }
    if (filter.versions) conditions.push(`${table}.version IN (${filter.versions.map(param).join(', ')})`);
    const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
    const from = table === 'd' ? 'health_daily d' : 'health_outcomes o';
    const sql = `SELECT ${TRACK_OF[0]} AS class, ${TRACK_OF[1]} AS product_hex, ${TRACK_OF[2]} AS application, ${table}.version, ${select}
      FROM ${from} JOIN device_inventory i ON i.uuid = ${table}.uuid ${where}
      GROUP BY ${[...TRACK_OF, `${table}.version`, ...groupBy.split(', ').filter(Boolean)].join(', ')}`;
    return { sql, params };
  };
  const rebooted = REBOOT_COLUMNS.map((c) => `d.${c}`).join(' + ');
  const sums = ['device_seconds', 'boots', 'heartbeats', ...REBOOT_COLUMNS, ...CRASH_COLUMNS].map((c) => `sum(d.${c}) AS ${c}`).join(', ');
  return {
    figures: statement('d', `count(DISTINCT d.uuid) AS devices, count(DISTINCT CASE WHEN ${rebooted} > 0 THEN d.uuid END) AS crashed_devices, ${sums}`, ''),
    outcomes: statement('o', 'o.outcome, o.reason, count(*) AS n', 'o.outcome, o.reason'),
  };
}

type ReleaseKey = { class: string; product_hex: string; application: string; version: string };
type FigureRow = Record<string, unknown> & ReleaseKey;
type OutcomeCountRow = ReleaseKey & { outcome: string; reason: string | null; n: Num };

/** Byte order of track and version, as the databases order them (COLLATE "C" on PostgreSQL). */
const releaseKey = (r: ReleaseKey) => [r.class, r.product_hex, r.application, r.version].join('\u0000');

function releaseFigure(r: ReleaseKey, sums: Record<string, unknown>): ReleaseHealthFigures {
  const n = (c: string) => Number(sums[c] ?? 0);
  return {
    class: r.class,
    productHex: r.product_hex,
    application: r.application,
    version: r.version,
    devices: n('devices'),
    crashedDevices: n('crashed_devices'),
    deviceSeconds: n('device_seconds'),
    boots: n('boots'),
    heartbeats: n('heartbeats'),
    reboots: counts(UNEXPECTED_REASONS, (k) => `reboots_${k}`, sums),
    crashes: counts(CRASH_KINDS, (k) => `crashes_${k}`, sums),
    outcomes: { inProgress: 0, succeeded: 0, failed: {}, rolledBack: 0 },
  };
}

/**
 * Both queries' rows as one figure per release, in byte order: also a release with outcomes and no day
 * yet, and (a track and versions asked for) each of those versions, zeros when nothing was reported.
 */
export function releaseHealthFromRows(figures: FigureRow[], outcomes: OutcomeCountRow[], filter: { track?: ReleaseTrack; versions?: string[] } = {}): ReleaseHealthFigures[] {
  const out = new Map<string, ReleaseHealthFigures>(figures.map((r) => [releaseKey(r), releaseFigure(r, r)]));
  const t = filter.track;
  for (const version of t ? (filter.versions ?? []) : []) {
    const r = { class: t!.class, product_hex: t!.productHex, application: t!.application, version };
    if (!out.has(releaseKey(r))) out.set(releaseKey(r), releaseFigure(r, {}));
  }
  for (const r of outcomes) {
    const k = releaseKey(r);
    if (!out.has(k)) out.set(k, releaseFigure(r, {}));
    const o = out.get(k)!.outcomes;
    const n = Number(r.n);
    if (r.outcome === 'succeeded') o.succeeded += n;
    else if (r.outcome !== 'failed') o.inProgress += n;
    else if (r.reason === 'rolled_back') o.rolledBack += n;
    else o.failed[r.reason ?? 'unknown'] = (o.failed[r.reason ?? 'unknown'] ?? 0) + n;
  }
  return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, f]) => f);
}
