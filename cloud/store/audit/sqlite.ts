// The audit domain on SQLite (types.ts has the contract, rows.ts the rows both halves share).
import type { SqliteConnection } from '../sqlite-connection.ts';
import { AUDIT_COLUMNS, auditFromRow, auditPage, auditValues, type AuditRow } from './rows.ts';
import type { AuditStore } from './types.ts';

export function sqliteAudit(c: SqliteConnection): AuditStore {
  const append = c.db.prepare(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  // One prepared statement per shape of filter (at most 16), made when first asked for.
  const pages = new Map<string, ReturnType<typeof c.db.prepare<unknown[], AuditRow>>>();
  return {
    appendAudit: async (entry) => {
      await c.write(() => append.run(...auditValues(entry)));
    },
    listAudit: (o) =>
      c.read(() => {
        const { sql, values } = auditPage(o, () => '?');
        let statement = pages.get(sql);
        if (!statement) pages.set(sql, (statement = c.db.prepare<unknown[], AuditRow>(sql)));
        return statement.all(...values).map(auditFromRow);
      }),
  };
}
