// The two stores a contract test runs on (docs/store-layout.md): SQLite in memory, and a fresh database
// on the run's PostgreSQL server; and a store opened before a describe's tests and closed after them.
import { afterAll, beforeAll } from 'vitest';
import { PostgresStore } from '../../cloud/store/postgres.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import type { CloudStore } from '../../cloud/store/types.ts';
import { freshDatabase } from './postgres.ts';

export const BOTH_STORES: [string, () => Promise<CloudStore>][] = [
  ['SQLite', async () => new SqliteStore(':memory:')],
  ['PostgreSQL', async () => PostgresStore.connect(await freshDatabase())],
];

/** The store `open` gives, opened in beforeAll and closed in afterAll; call the getter inside a test. */
export function openedStore(open: () => Promise<CloudStore>): () => CloudStore {
  let store: CloudStore | undefined;
  beforeAll(async () => {
    store = await open();
  });
  afterAll(() => store?.close());
  return () => store!;
}
