// The audit log as both halves read and write it: the details as JSON text, the id a BIGINT (a string
// from PostgreSQL).
import type { AuditEntry, AuditFilter } from './types.ts';

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

/** The columns an entry is written with, in the order of auditValues. */
export const AUDIT_COLUMNS = 'at, actor, via, action, method, path, status, details';

export function auditValues(e: Omit<AuditEntry, 'id'>): unknown[] {
  return [e.at, e.actor, e.via, e.action, e.method, e.path, e.status, e.details === null ? null : JSON.stringify(e.details)];
}

/** The first id a page of the log reads below (newest first). */
export const pageBelow = (o: { beforeId?: number }) => o.beforeId ?? Number.MAX_SAFE_INTEGER;

/**
 * A page of the log as SQL both halves run: the WHERE clause with its values, then the limit's
 * placeholder. `param(n)` writes the n-th placeholder (`?` for SQLite, `$n` for PostgreSQL).
 */
export function auditPage(o: { limit: number; beforeId?: number } & AuditFilter, param: (n: number) => string): { sql: string; values: unknown[] } {
  const values: unknown[] = [pageBelow(o)];
  const where = [`id < ${param(1)}`];
  const add = (condition: (p: string) => string, value: string | undefined) => {
    if (value === undefined) return;
    values.push(value);
    where.push(condition(param(values.length)));
  };
  add((p) => `actor = ${p}`, o.actor);
  add((p) => `action = ${p}`, o.action);
  add((p) => `at >= ${p}`, o.since);
  add((p) => `at < ${p}`, o.until);
  values.push(o.limit);
  return { sql: `SELECT * FROM audit_log WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ${param(values.length)}`, values };
}
