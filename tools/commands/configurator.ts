// `fleet configurator --site site.db`: the installer's web app (configurator/), on loopback unless
// --host says otherwise. Prints its URL and opens nothing; Ctrl-C stops it.
import { InvalidArgumentError, type Command } from 'commander';
import { resolve } from 'node:path';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';
import type { CommandContext } from './context.ts';

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError(`must be a port from 0 to 65535: ${value}`);
  return n;
}

export function configuratorCommand(program: Command, _ctx: CommandContext): void {
  program
    .command('configurator')
    .description("Serve the installer's configurator (controllers, Deployment Required, provisioning, cloud backup) on loopback and print its URL")
    .requiredOption('--site <file>', 'the site database (SQLite; created when missing)')
    .option('--port <port>', 'listening port (0 picks a free one)', port, 8090)
    .option('--host <address>', 'listening address: loopback unless you mean to serve other machines', '127.0.0.1')
    .action(async (o: { site: string; port: number; host: string }) => {
      const [{ startConfigurator }, { SiteFileError }] = await Promise.all([import('../../configurator/server/app.ts'), import('../../configurator/server/site-store.ts')]);
      let running: Awaited<ReturnType<typeof startConfigurator>>;
      try {
        running = await startConfigurator({ site: resolve(o.site), host: o.host, port: o.port, log: (line) => process.stderr.write(`configurator: ${line}\n`) });
      } catch (err) {
        // Exit 4 (bad configuration), with a sentence: a file that is not a site, a port in use.
        const code = (err as { code?: string }).code;
        if (err instanceof SiteFileError) throw Object.assign(new Error(err.message), { exitCode: EXIT_CODES.config });
        if (code === 'EADDRINUSE') throw Object.assign(new Error(`${o.host}:${o.port} is in use: pick another port with --port`), { exitCode: EXIT_CODES.config });
        if (code === 'EADDRNOTAVAIL') throw Object.assign(new Error(`${o.host} is not an address of this machine`), { exitCode: EXIT_CODES.config });
        throw err;
      }
      process.stderr.write(`configurator: site ${running.store.path}; Ctrl-C stops it\n`);
      process.stdout.write(`${running.url}\n`);
      await new Promise<void>((done) => {
        const stop = () => running.close().then(done, done);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
