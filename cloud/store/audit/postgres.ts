// The audit domain on PostgreSQL (types.ts has the contract, rows.ts the rows both halves share).
import type { PostgresConnection } from '../postgres-pool.ts';
import { AUDIT_COLUMNS, auditFromRow, auditValues, pageBelow, type AuditRow } from './rows.ts';
import type { AuditStore } from './types.ts';

export function postgresAudit({ pool }: PostgresConnection): AuditStore {
  return {
    async appendAudit(entry) {
      await pool.query(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, auditValues(entry));
    },
    async listAudit(o) {
      const { rows } = await pool.query<AuditRow>('SELECT * FROM audit_log WHERE id < $1 ORDER BY id DESC LIMIT $2', [pageBelow(o), o.limit]);
      return rows.map(auditFromRow);
    },
  };
}
