// `fleet serve`: the cloud in the foreground (what `npm start` runs). The cloud (Express, the schemas
// and their compiled checks, pino) is imported when `serve` runs, not when the program is built: every
// other `fleet` command is a client of a running cloud and never loads it.
import type { Command } from 'commander';

/** A listen that failed, as a sentence naming the address and what to do; undefined for other errors. */
function listenProblem(err: unknown, host: string, port: number): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (code === 'EADDRINUSE') return `${where} is already in use by another program (another cloud?): stop it, or serve on another port with --port or PORT (0 picks a free one)`;
  if (code === 'EACCES') return `${where}: no permission to listen on port ${port} (ports below 1024 need privileges): choose a port from 1024 up with --port or PORT`;
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this machine: choose one with --host or HOST (the default is 127.0.0.1)`;
  return undefined;
}

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description('Serve the cloud API (configured by PORT, HOST, DATABASE_URL, JWT_SECRET, ...; see README)')
    .option('--port <port>', 'overrides PORT')
    .option('--host <host>', 'overrides HOST')
    .action(async (o: { port?: string; host?: string }) => {
      const env = { ...process.env };
      if (o.port !== undefined) env.PORT = o.port;
      if (o.host !== undefined) env.HOST = o.host;
      const [{ ConfigError, loadConfig }, { startCloudServer }, { fileErrorMessage, isFileSystemError }] = await Promise.all([
        import('../../cloud/config.ts'),
        import('../../cloud/server.ts'),
        import('../../harness/file-errors.ts'),
      ]);
      // The secret file is read or created by loadConfig, the store's folder by startCloudServer.
      let config;
      try {
        config = loadConfig(env);
      } catch (err) {
        throw isFileSystemError(err) ? new ConfigError(`${fileErrorMessage(err, 'the JWT secret file')} (set JWT_SECRET_FILE, or JWT_SECRET)`) : err;
      }
      let running;
      try {
        running = await startCloudServer(config);
      } catch (err) {
        const listen = listenProblem(err, config.host, config.port);
        if (listen) throw new ConfigError(listen);
        throw isFileSystemError(err) ? new ConfigError(`${fileErrorMessage(err, 'the store')} (DATABASE_URL is ${config.databaseUrl})`) : err;
      }
      const jwt = config.jwt.mode === 'hs256' ? `HS256 secret from ${config.jwt.secretSource}` : `JWKS ${config.jwt.jwksUrl}`;
      process.stderr.write(`cloud listening on ${running.url} (store ${running.store.kind} ${config.databaseUrl}; JWT ${jwt})\n`);
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          process.stderr.write(`${signal}: closing\n`);
          running.close().then(resolve, resolve);
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      });
    });
}
