// The audit domain on SQLite (types.ts has the contract, rows.ts the rows both halves share).
import type { SqliteConnection } from '../sqlite-connection.ts';
import { AUDIT_COLUMNS, auditFromRow, auditValues, pageBelow, type AuditRow } from './rows.ts';
import type { AuditStore } from './types.ts';

export function sqliteAudit(c: SqliteConnection): AuditStore {
  const append = c.db.prepare(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  const list = c.db.prepare<[number, number], AuditRow>(`SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?`);
  return {
    appendAudit: async (entry) => {
      await c.write(() => append.run(...auditValues(entry)));
    },
    listAudit: (o) => c.read(() => list.all(pageBelow(o), o.limit).map(auditFromRow)),
  };
}
