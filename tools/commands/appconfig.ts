// `fleet appconfig show|set|deploy|delete`: the runtime configuration (log level) of the cloud's
// functions (spec 4.1, docs/appconfig-deployments.md).
import { Option, type Command } from 'commander';
import { LOG_LEVELS } from '../../cloud/functions.ts';
import { path } from '../client.ts';
import type { CommandContext } from './context.ts';

export function appconfigCommands(program: Command, { client, print }: CommandContext): void {
  const appconfig = program.command('appconfig').description('Runtime configuration (log level) of the cloud functions');
  appconfig
    .command('show')
    .description('Show one function, or all')
    .argument('[function]')
    .action(async (fn?: string) => {
      print((await client().request('GET', fn ? path('appconfig', fn) : '/appconfig')).body);
    });
  appconfig
    .command('set')
    .description('Stage a configuration (not deployed until `deploy`)')
    .argument('<function>')
    .addOption(new Option('--logging <level>', 'log level').choices([...LOG_LEVELS, ...LOG_LEVELS.map((l) => l.toLowerCase())]).makeOptionMandatory())
    .action(async (fn: string, o: { logging: string }) => {
      print((await client().request('PATCH', path('appconfig', fn), { logging: o.logging })).body);
    });
  appconfig
    .command('deploy')
    .description('Deploy the latest staged configuration')
    .argument('<function>')
    .action(async (fn: string) => {
      print((await client().request('POST', path('appconfig', fn, 'deploy'))).body);
    });
  appconfig
    .command('delete')
    .description('Remove the configuration; the function reverts to WARNING')
    .argument('<function>')
    .action(async (fn: string) => {
      await client().request('DELETE', path('appconfig', fn));
      process.stdout.write(`deleted the configuration of ${fn}\n`);
    });
}
