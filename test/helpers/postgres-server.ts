// The PostgreSQL server launcher lives in tools/postgres-server.ts (the fleet bench uses it too);
// the tests import it from here.
export { startPostgres, type PostgresServer } from '../../tools/postgres-server.ts';
