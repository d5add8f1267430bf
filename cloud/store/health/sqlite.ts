// The health domain on SQLite (types.ts has the contract, rows.ts the rows and statements both halves
// share): an ingest is one IMMEDIATE transaction, so two reports of one device are counted one after
// the other, whichever process stores them.
import type Database from 'better-sqlite3';
import type { SqliteConnection } from '../sqlite-connection.ts';
import { healthDayFromRow, healthSql, ingestReport, releaseHealthFromRows, releaseHealthSql, storedReportFromRow, totalsFromRow, type HealthStatement, type StoreCall } from './rows.ts';
import type { HealthStore } from './types.ts';

export function sqliteHealth(c: SqliteConnection): HealthStore {
  const { db } = c;
  const sql = healthSql(() => '?');
  const stmts = Object.fromEntries(Object.entries(sql).map(([k, text]) => [k, db.prepare(text)])) as Record<HealthStatement, Database.Statement<unknown[], Record<string, unknown>>>;
  /** One statement of an ingest: the rows it read, none for a write. */
  const run = ({ sql, params }: StoreCall) => (stmts[sql].reader ? stmts[sql].all(...params) : (stmts[sql].run(...params), []));
  const all = (q: { sql: string; params: unknown[] }) => db.prepare<unknown[], Record<string, unknown>>(q.sql).all(...q.params);

  return {
    putHealthReport: (uuid, report, receivedAt) =>
      c.transaction(() => {
        const steps = ingestReport(uuid, report, receivedAt);
        let step = steps.next();
        while (!step.done) step = steps.next(run(step.value));
        return step.value;
      }),

    listHealthReports: (uuid, o) =>
      c.read(() => stmts.listReports.all(uuid, o.beforeSeq ?? Number.MAX_SAFE_INTEGER, o.limit).map((r) => storedReportFromRow(r as { received_at: string; body: string }))),

    listHealthDays: (uuid, o) => c.read(() => stmts.listDays.all(uuid, o.sinceDay).map(healthDayFromRow)),

    releaseHealth: (filter) =>
      c.read(() => {
        const { figures, outcomes } = releaseHealthSql(filter, () => '?');
        return releaseHealthFromRows(all(figures) as never[], all(outcomes) as never[], filter);
      }),

    healthTotals: (o) => c.read(() => totalsFromRow(stmts.totals.get(o.crashedSince, o.lowHeapBelow)!)),
  };
}
