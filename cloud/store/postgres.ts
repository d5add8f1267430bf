// The PostgreSQL store: the same CloudStore as SQLite, for a cloud that outgrows one machine (several
// instances share it). It opens the pool and migrates (migrate.ts, under an advisory lock), and is the
// PostgreSQL halves of the domains side by side (docs/store-layout.md): their methods are its own.
import pg from 'pg';
import { postgresAppconfig } from './appconfig/postgres.ts';
import { postgresAudit } from './audit/postgres.ts';
import { postgresBackups } from './backups/postgres.ts';
import { postgresConsoleSessions } from './console-sessions/postgres.ts';
import { postgresDevices } from './devices/postgres.ts';
import { adoptDomains } from './domains.ts';
import { postgresHealth } from './health/postgres.ts';
import { migrate, postgresBook } from './migrate.ts';
import { POOL_SIZE, postgresConnection } from './postgres-pool.ts';
import { postgresReleases } from './releases/postgres.ts';
import { POSTGRES_MIGRATIONS } from './schema.ts';
import type { CloudStore, DomainStores, StoreStats } from './types.ts';

/** The domains' methods, given to each store by its constructor (checked there against DomainStores). */
export interface PostgresStore extends DomainStores {}

export class PostgresStore implements CloudStore {
  readonly kind = 'postgres' as const;

  private constructor(private readonly pool: pg.Pool) {
    const c = postgresConnection(pool);
    const domains: DomainStores = {
      ...postgresReleases(c),
      ...postgresDevices(c),
      ...postgresBackups(c),
      ...postgresAppconfig(c),
      ...postgresAudit(c),
      ...postgresConsoleSessions(c),
      ...postgresHealth(c),
    };
    adoptDomains(this, domains);
  }

  /**
   * Connects, and migrates the schema (one instance at a time, under an advisory lock). `poolSize`:
   * connections of this process (POOL_SIZE; a worker of a serve takes its share, docs/cloud-workers.md).
   */
  static async connect(url: string, opts: { poolSize?: number } = {}): Promise<PostgresStore> {
    const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? POOL_SIZE });
    try {
      await migrate(postgresBook(pool), POSTGRES_MIGRATIONS);
    } catch (err) {
      await pool.end();
      throw err;
    }
    return new PostgresStore(pool);
  }

  schemaVersion(): Promise<number> {
    return postgresBook(this.pool).read();
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** No lock waits of its own to count: the server makes a statement wait for a lock (StoreStats). */
  stats(): StoreStats {
    return { busy: 0, calls: 0, maxWaitMs: 0, batches: 0, gaveUp: 0 };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
