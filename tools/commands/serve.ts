// `fleet serve`: the cloud in the foreground (what `npm start` runs).
import type { Command } from 'commander';
import { loadConfig } from '../../cloud/config.ts';
import { startCloudServer } from '../../cloud/server.ts';

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
