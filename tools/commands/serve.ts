// `fleet serve`: the cloud in the foreground (what `npm start` runs), on WORKERS processes that share
// the port (default: every core this process may use; docs/cloud-workers.md), or in this process alone
// with WORKERS=1. SIGTERM / SIGINT: the requests in flight are finished, the store closed, exit 0.
// The cloud (Express, the schemas and their compiled checks, pino) is imported when `serve` runs, not
// when the program is built: every other `fleet` command is a client of a running cloud and never loads it.
import type { Command } from 'commander';
import type { CommandContext } from './context.ts';

/** Resolves with the name of the first SIGTERM or SIGINT. */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

export function serveCommand(program: Command, _ctx: CommandContext): void {
  program
    .command('serve')
    .description('Serve the cloud API on WORKERS processes (configured by PORT, HOST, DATABASE_URL, JWT_SECRET, WORKERS, ...; see README)')
    .option('--port <port>', 'overrides PORT')
    .option('--host <host>', 'overrides HOST')
    .action(async (o: { port?: string; host?: string }) => {
      const env = { ...process.env };
      if (o.port !== undefined) env.PORT = o.port;
      if (o.host !== undefined) env.HOST = o.host;
      const [{ ConfigError, loadConfig }, { fileErrorMessage, isFileSystemError }] = await Promise.all([import('../../cloud/config.ts'), import('../../cloud/file-errors.ts')]);
      // The secret file is read or created by loadConfig, the store's folder by startCloudServer.
      let config: ReturnType<typeof loadConfig>;
      try {
        config = loadConfig(env);
      } catch (err) {
        throw isFileSystemError(err) ? new ConfigError(`${fileErrorMessage(err, 'the JWT secret file')} (set JWT_SECRET_FILE, or JWT_SECRET)`) : err;
      }
      const jwt = config.jwt.mode === 'hs256' ? `HS256 secret from ${config.jwt.secretSource}` : `JWKS ${config.jwt.jwksUrl}`;
      const listening = (url: string, storeKind: string) =>
        process.stderr.write(
          `cloud listening on ${url} (store ${storeKind} ${config.databaseUrl}; JWT ${jwt}; ${config.workers} worker${config.workers === 1 ? '' : 's'})\n` +
            `operator console: ${url.replace(/\/$/, '')}/console (log in with a token from \`npx fleet token\`)\n`,
        );
      const stop = stopSignal();
      if (config.workers > 1) {
        const { superviseWorkers } = await import('../../cloud/cluster/supervisor.ts');
        let end: Awaited<ReturnType<typeof superviseWorkers>>;
        try {
          end = await superviseWorkers({ config, say: (line) => process.stderr.write(`${line}\n`), onListening: listening, stopSignal: stop });
        } catch (err) {
          // The store opened once by the supervisor, before any worker: said as in one process.
          const { startProblem } = await import('../../cloud/start-problem.ts');
          const problem = startProblem(err, config);
          throw problem ? new ConfigError(problem) : err;
        }
        // Carried to the exit code by tools/fleet.ts (errors with an exitCode).
        if (end.exitCode !== 0) throw Object.assign(new Error(end.problem ?? `exit ${end.exitCode}`), { exitCode: end.exitCode });
        return;
      }
      const { startCloudServer } = await import('../../cloud/server.ts');
      let running: Awaited<ReturnType<typeof startCloudServer>>;
      try {
        running = await startCloudServer(config);
      } catch (err) {
        const { startProblem } = await import('../../cloud/start-problem.ts');
        const problem = startProblem(err, config);
        throw problem ? new ConfigError(problem) : err;
      }
      listening(running.url, running.store.kind);
      process.stderr.write(`${await stop}: closing (finishing the requests in flight, up to ${config.shutdownTimeoutMs} ms)\n`);
      const { cut } = await running.shutdown(config.shutdownTimeoutMs);
      const { stoppedLine, workerStats } = await import('../../cloud/cluster/stats.ts');
      process.stderr.write(`${stoppedLine([workerStats(running, cut)], 1, running.store.kind)}\n`);
    });
}
