// `fleet serve`: the cloud in the foreground (what `npm start` runs). The cloud (Express, the schemas
// and their compiled checks, pino) is imported when `serve` runs, not when the program is built: every
// other `fleet` command is a client of a running cloud and never loads it.
import type { Command } from 'commander';

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
      const [{ loadConfig }, { startCloudServer }] = await Promise.all([import('../../cloud/config.ts'), import('../../cloud/server.ts')]);
      const config = loadConfig(env);
      const running = await startCloudServer(config);
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
