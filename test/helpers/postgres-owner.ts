// A process that starts a PostgreSQL server (tools/postgres-server.ts) and waits: test/tools/postgres-server.test.ts
// kills it (SIGKILL, SIGTERM, …) and checks that the server and its folder go with it. Prints one JSON line:
// { url, dir, watchdogPid, postmasterPid } once the server answers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPostgres } from '../../tools/postgres-server.ts';

const server = await startPostgres();
const postmasterPid = Number(readFileSync(join(server.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
process.stdout.write(JSON.stringify({ url: server.url, dir: server.dir, watchdogPid: server.watchdogPid, postmasterPid }) + '\n');
if (process.argv.includes('--stop-on-signal')) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      server.stop();
      process.exit(0);
    });
  }
}
setInterval(() => undefined, 60_000);
