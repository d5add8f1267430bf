// The two stores' schemas are one (cloud/store/schema.ts, docs/store-layout.md): a migrated SQLite
// database (PRAGMA table_info, index_list) and a migrated PostgreSQL one (information_schema, pg_indexes)
// have the same tables, and each table the same columns in the same order, compared by name, type
// family, nullability, default and place in the primary key, and the same indexes. Any difference fails.
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresBook, sqliteBook } from '../../cloud/store/migrate.ts';
import { POSTGRES_MIGRATIONS, SQLITE_MIGRATIONS } from '../../cloud/store/schema.ts';
import { freshDatabase } from '../helpers/postgres.ts';

interface Column {
  name: string;
  family: string;
  notNull: boolean;
  default: string | null;
  /** 1-based place in the primary key; 0 when not in it. */
  primaryKey: number;
}
interface Schema {
  tables: Record<string, Column[]>;
  /** Index name: its table and columns (the indexes a migration creates, not those of a key). */
  indexes: Record<string, string>;
}

/** Within a family the width may differ: SQLite's INTEGER is 64-bit, PostgreSQL has INTEGER and BIGINT. */
const FAMILIES: Record<string, string> = {
  integer: 'integer',
  bigint: 'integer',
  // SQLite has no boolean: it keeps 0 and 1 in an INTEGER (and PostgreSQL's false/true defaults are 0/1 there).
  boolean: 'integer',
  text: 'text',
  blob: 'bytes',
  bytea: 'bytes',
  real: 'real',
  'double precision': 'real',
};
const family = (type: string) => FAMILIES[type.toLowerCase()] ?? `unknown type ${type}`;

function sqliteSchema(db: Database.Database): Schema {
  const schema: Schema = { tables: {}, indexes: {} };
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
  for (const table of names) {
    const columns = db.pragma(`table_info(${table})`) as { name: string; type: string; notnull: number; dflt_value: string | null; pk: number }[];
    const keyColumns = columns.filter((c) => c.pk > 0).length;
    schema.tables[table] = columns.map((c) => ({
      name: c.name,
      family: family(c.type),
      // A key column takes no NULL in PostgreSQL. SQLite lets one in a rowid table's TEXT key (a quirk
      // it keeps for old files, sqlite.org/lang_createtable.html); the stores never write one.
      notNull: c.notnull === 1 || c.pk > 0,
      // A lone INTEGER key is the rowid: assigned by SQLite, as a sequence is by PostgreSQL.
      default: c.pk > 0 && keyColumns === 1 && c.type === 'INTEGER' ? 'assigned' : c.dflt_value,
      primaryKey: c.pk,
    }));
    for (const index of db.pragma(`index_list(${table})`) as { name: string; origin: string }[]) {
      if (index.origin !== 'c') continue;
      const on = (db.pragma(`index_info(${index.name})`) as { name: string }[]).map((c) => c.name);
      schema.indexes[index.name] = `${table} (${on.join(', ')})`;
    }
  }
  return schema;
}

async function postgresSchema(c: pg.ClientBase): Promise<Schema> {
  const schema: Schema = { tables: {}, indexes: {} };
  const { rows: columns } = await c.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null; key: number | null }>(
    `SELECT col.table_name, col.column_name, col.data_type, col.is_nullable, col.column_default, key.ordinal_position AS key
     FROM information_schema.columns col
     JOIN information_schema.tables t ON t.table_schema = col.table_schema AND t.table_name = col.table_name AND t.table_type = 'BASE TABLE'
     LEFT JOIN (information_schema.table_constraints tc
       JOIN information_schema.key_column_usage key ON key.constraint_schema = tc.constraint_schema AND key.constraint_name = tc.constraint_name)
       ON tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = col.table_schema AND tc.table_name = col.table_name AND key.column_name = col.column_name
     WHERE col.table_schema = current_schema() AND col.table_name <> 'schema_migrations'
     ORDER BY col.table_name COLLATE "C", col.ordinal_position`,
  );
  for (const r of columns) {
    const defaults: Record<string, string> = { false: '0', true: '1' };
    const written = r.column_default?.replace(/::[a-z ]+$/, '') ?? null;
    (schema.tables[r.table_name] ??= []).push({
      name: r.column_name,
      family: family(r.data_type),
      notNull: r.is_nullable === 'NO',
      default: written?.startsWith('nextval(') ? 'assigned' : written === null ? null : (defaults[written] ?? written),
      primaryKey: r.key ?? 0,
    });
  }
  const { rows: indexes } = await c.query<{ indexname: string; tablename: string; indexdef: string }>(
    `SELECT i.indexname, i.tablename, i.indexdef FROM pg_indexes i
     WHERE i.schemaname = current_schema() AND i.tablename <> 'schema_migrations'
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass)`,
  );
  for (const r of indexes) schema.indexes[r.indexname] = `${r.tablename} ${/\((.*)\)$/.exec(r.indexdef)![0]}`;
  return schema;
}

describe('the SQLite and PostgreSQL schemas', () => {
  const sqlite = new Database(':memory:');
  let client: pg.Client;
  beforeAll(async () => {
    migrate(sqliteBook(sqlite), SQLITE_MIGRATIONS);
    const pool = new pg.Pool({ connectionString: await freshDatabase(), max: 1 });
    await migrate(postgresBook(pool), POSTGRES_MIGRATIONS);
    await pool.end();
    client = new pg.Client({ connectionString: pool.options.connectionString });
    await client.connect();
  });
  afterAll(async () => {
    sqlite.close();
    await client.end();
  });

  it('have the same tables, each with the same columns (name, type family, nullability, default, key) and the same indexes', async () => {
    const onSqlite = sqliteSchema(sqlite);
    const onPostgres = await postgresSchema(client);
    // The comparison sees what it should: every table, and a column of each kind.
    expect(Object.keys(onSqlite.tables).length).toBeGreaterThanOrEqual(14);
    expect(onSqlite.tables.audit_log?.[0]).toEqual({ name: 'id', family: 'integer', notNull: true, default: 'assigned', primaryKey: 1 });
    expect(onPostgres.tables.firmware_releases?.find((c) => c.name === 'hosted')).toEqual({ name: 'hosted', family: 'integer', notNull: true, default: '0', primaryKey: 0 });
    expect(onPostgres.indexes.device_groups_name).toBe('device_groups (group_name, uuid)');
    expect(onSqlite.tables.rollouts?.find((c) => c.name === 'health_margin')).toEqual({ name: 'health_margin', family: 'real', notNull: false, default: null, primaryKey: 0 });
    expect(onPostgres.tables.health_daily?.filter((c) => c.primaryKey > 0).map((c) => c.name)).toEqual(['uuid', 'version', 'day']);
    expect(onPostgres).toEqual(onSqlite);
  });
});
