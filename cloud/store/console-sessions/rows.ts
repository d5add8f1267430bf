// The console_sessions table as both halves read and write it: the groups as JSON text, the expiry a
// BIGINT (a string from PostgreSQL).
import type { ConsoleSessionRecord } from './types.ts';

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

export const CONSOLE_SESSION_COLUMNS = 'id_hash, subject, groups, csrf_hash, created_at, expires_at_ms';

/** The row's values in the order of CONSOLE_SESSION_COLUMNS. */
export function consoleSessionValues(s: ConsoleSessionRecord): [string, string | null, string, string, string, number] {
  return [s.idHash, s.subject, JSON.stringify(s.groups), s.csrfHash, s.createdAt, s.expiresAtMs];
}
