// Vitest global set-up: one PostgreSQL server for the whole run; each test file makes its own database.
import type { TestProject } from 'vitest/node';
import { startPostgres } from '../helpers/postgres-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const server = await startPostgres();
  project.provide('postgresUrl', server.url);
  return () => server.stop();
}
