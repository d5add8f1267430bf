// One async factory picks the store from DATABASE_URL and imports it lazily.
import { workerShare } from '../worker-share.ts';
import { databaseKind, sqliteOptionsFromUrl } from './database-url.ts';
import { POOL_SIZE } from './postgres-pool.ts';
import type { CloudStore } from './types.ts';

export type { CloudStore } from './types.ts';

export class UnsupportedDatabaseError extends Error {
  override name = 'UnsupportedDatabaseError';
}

/** `workers`: the processes of this serve that open the store each (docs/cloud-workers.md). */
export async function openStore(databaseUrl: string, opts: { workers?: number } = {}): Promise<CloudStore> {
  const kind = databaseKind(databaseUrl);
  if (kind === 'postgres') {
    const { PostgresStore } = await import('./postgres.ts');
    return PostgresStore.connect(databaseUrl, { poolSize: workerShare(POOL_SIZE, opts.workers ?? 1, 2) });
  }
  if (kind === 'unknown') {
    throw new UnsupportedDatabaseError(`DATABASE_URL has an unknown scheme: ${JSON.stringify(databaseUrl)}`);
  }
  const { SqliteStore } = await import('./sqlite.ts');
  const { path, options } = sqliteOptionsFromUrl(databaseUrl);
  return new SqliteStore(path, options);
}
