// The health domain on PostgreSQL (types.ts has the contract, rows.ts the rows and statements both
// halves share): an ingest is one transaction that first locks its device's row (FOR NO KEY UPDATE:
// not the foreign keys' share locks), so two reports of one device stored by two instances at once
// are counted one after the other, and a device removed meanwhile gets none.
import type { PostgresConnection } from '../postgres-pool.ts';
import { healthDayFromRow, healthSql, ingestReport, releaseHealthFromRows, releaseHealthSql, storedReportFromRow, totalsFromRow } from './rows.ts';
import type { HealthStore } from './types.ts';

const SQL = healthSql((n) => `$${n}`, ' FOR NO KEY UPDATE');

export function postgresHealth({ pool, tx }: PostgresConnection): HealthStore {
  return {
    putHealthReport: (uuid, report, receivedAt) =>
      tx(async (c) => {
        const steps = ingestReport(uuid, report, receivedAt);
        let step = steps.next();
        while (!step.done) step = steps.next((await c.query<Record<string, unknown>>(SQL[step.value.sql], step.value.params)).rows);
        return step.value;
      }),

    async listHealthReports(uuid, o) {
      const { rows } = await pool.query<{ received_at: string; body: string }>(SQL.listReports, [uuid, o.beforeSeq ?? Number.MAX_SAFE_INTEGER, o.limit]);
      return rows.map(storedReportFromRow);
    },

    async listHealthDays(uuid, o) {
      const { rows } = await pool.query<Record<string, unknown>>(SQL.listDays, [uuid, o.sinceDay]);
      return rows.map(healthDayFromRow);
    },

    async releaseHealth(filter) {
      const { figures, outcomes } = releaseHealthSql(filter, (n) => `$${n}`);
      const [f, o] = await Promise.all([pool.query(figures.sql, figures.params), pool.query(outcomes.sql, outcomes.params)]);
      return releaseHealthFromRows(f.rows, o.rows, filter);
    },

    healthTotals: async (o) => totalsFromRow((await pool.query(SQL.totals, [o.crashedSince, o.lowHeapBelow])).rows[0]),
  };
}
