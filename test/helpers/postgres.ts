// A fresh database on the run's PostgreSQL server, for one test file.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export async function freshDatabase(): Promise<string> {
  const admin = inject('postgresUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return admin.replace(/\/postgres$/, `/${name}`);
}
