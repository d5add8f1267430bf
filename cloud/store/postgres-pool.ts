// The PostgreSQL store's connections (one pool a process, docs/cloud-workers.md) and its one way of
// running a transaction, which every PostgreSQL half of a domain and the migration runner use.
import type pg from 'pg';

/** Connections of one process; the workers of a serve divide it among them (at least 2 each). */
export const POOL_SIZE = 10;

/** A transaction on one connection of the pool: committed when `fn` resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** What a PostgreSQL half of a domain is given: the pool, and transactions on it. */
export interface PostgresConnection {
  pool: pg.Pool;
  tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T>;
}

export function postgresConnection(pool: pg.Pool): PostgresConnection {
  return { pool, tx: (fn) => inTransaction(pool, fn) };
}

/** `$1, $2, …` for n parameters. */
export const numbered = (n: number) => Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ');

/** How many rows a statement changed. */
export const changed = (r: pg.QueryResult) => (r.rowCount ?? 0) > 0;
