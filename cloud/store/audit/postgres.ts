// The audit domain on PostgreSQL (types.ts has the contract, rows.ts the rows both halves share).
import type { PostgresConnection } from '../postgres-pool.ts';
import { AUDIT_COLUMNS, auditFromRow, auditPage, auditValues, type AuditRow } from './rows.ts';
import type { AuditStore } from './types.ts';

export function postgresAudit({ pool }: PostgresConnection): AuditStore {
  return {
    async appendAudit(entry) {
      await pool.query(`INSERT INTO audit_log (${AUDIT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, auditValues(entry));
    },
    async listAudit(o) {
      const { sql, values } = auditPage(o, (n) => `$${n}`);
      const { rows } = await pool.query<AuditRow>(sql, values);
      return rows.map(auditFromRow);
    },
  };
}
