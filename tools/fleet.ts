// `fleet`: the command line of the project. Each command lives in a module of tools/commands/ with one
// shape (commands/context.ts); this file registers them and says every error in one place (main()).
// Exit codes: one table, cloud/exit-codes.ts (0 done, 1 refused, 2 usage, 3 the cloud unreachable,
// 4 configuration; the board commands 5 to 11, the farm 12 to 15).
import { Command, CommanderError, Option } from 'commander';
import { isApiError } from '../cloud/errors.ts';
import { ConfigError } from '../cloud/config-error.ts';
import { PACKAGE_VERSION } from '../cloud/version.ts';
import { UnsupportedDatabaseError } from '../cloud/store/index.ts';
import { CloudClient, CloudRequestError, CloudUnreachableError } from './client.ts';
import { cloudUrlOption } from './cli/cloud-url.ts';
import { operatorName, operatorOption } from './cli/operator.ts';
import { printJson } from './cli/output.ts';
import { appconfigCommands } from './commands/appconfig.ts';
import { benchCommand } from './commands/bench.ts';
import { configuratorCommand } from './commands/configurator.ts';
import { consoleCommands } from './commands/console.ts';
import type { CommandContext, RegisterCommands } from './commands/context.ts';
import { efuseCommand } from './commands/efuse.ts';
import { enrollCommand } from './commands/enroll.ts';
import { farmCommand } from './commands/farm.ts';
import { firmwareCommands } from './commands/firmware.ts';
import { flashCommand } from './commands/flash.ts';
import { imageCommand } from './commands/image.ts';
import { healthCommands } from './commands/health.ts';
import { auditCommand, inventoryCommands, rolloutCommands } from './commands/inventory.ts';
import { monitorCommand } from './commands/monitor.ts';
import { portsCommand } from './commands/ports.ts';
import { serveCommand } from './commands/serve.ts';
import { signingCommand } from './commands/signing.ts';
import { simulateCommand } from './commands/simulate.ts';
import { mintSuperUserToken, tokenCommand } from './commands/token.ts';
import { virtualCommand } from './commands/virtual.ts';
import { fileErrorMessage, isFileSystemError } from '../cloud/file-errors.ts';
import { RigError } from '../harness/rig-error.ts';
import { EXIT_CODES } from '../cloud/exit-codes.ts';

export const EXIT = Object.freeze({ ok: EXIT_CODES.ok, refused: EXIT_CODES.refused, usage: EXIT_CODES.usage, unreachable: EXIT_CODES.unreachable, config: EXIT_CODES.config });

let commandExit: number = EXIT.ok;

/** Every command module, in the order `fleet --help` lists them; each registers itself (commands/context.ts). */
const MODULES: readonly RegisterCommands[] = [
  serveCommand,
  // The installer's web app (docs/configurator-controller-access.md).
  configuratorCommand,
  benchCommand,
  // Boards shared by many jobs through a labgrid coordinator (docs/board-farm.md).
  farmCommand,
  imageCommand,
  // Boards on serial ports and RFC 2217 servers, and virtual boards to try them on (docs/physical-rig.md).
  flashCommand,
  efuseCommand,
  consoleCommands,
  monitorCommand,
  portsCommand,
  virtualCommand,
  // A boot storm of simulated devices against a running cloud (docs/fleet-scale.md).
  simulateCommand,
  tokenCommand,
  firmwareCommands,
  signingCommand,
  rolloutCommands,
  auditCommand,
  enrollCommand,
  inventoryCommands,
  healthCommands,
  appconfigCommands,
];

export function buildProgram(): Command {
  const program = new Command('fleet')
    .description('Cloud, firmware releases, device enrollment and runtime configuration of the device fleet')
    .addOption(new Option('--cloud <url>', 'cloud base URL with its scheme, and its path prefix behind a reverse proxy (http://host/fleet-api)').env('FLEET_CLOUD_URL').default('http://127.0.0.1:8080').argParser(cloudUrlOption))
    .option('--token <jwt>', 'super-user token (env FLEET_TOKEN; otherwise minted from JWT_SECRET or the JWT secret file)')
    .addOption(new Option('--as <name>', 'who you are in the audit log: the subject of the tokens this command mints (default: user@host)').env('FLEET_OPERATOR').argParser(operatorOption))
    .showHelpAfterError()
    .addHelpText('after', '\n`fleet --version` (or -V) prints the version.')
    .exitOverride();

  const operator = () => operatorName(program.opts<{ as?: string }>().as);
  const ctx: CommandContext = {
    client: () => {
      const opts = program.opts<{ cloud: string; token?: string }>();
      const explicit = opts.token ?? process.env.FLEET_TOKEN;
      return new CloudClient(opts.cloud, async () => (explicit ? explicit : mintSuperUserToken({ subject: operator(), ttlSeconds: 300 })));
    },
    setExit: (code) => (commandExit = code),
    print: printJson,
    operator,
  };
  for (const register of MODULES) register(program, ctx);
  return program;
}

/** `fleet --version` (or -V) alone: the version. Not a commander option, which would take the `--version` of `image build` and `firmware release`. */
const VERSION_FLAGS = ['--version', '-V'];

export async function main(argv: string[]): Promise<number> {
  if (argv.length === 3 && VERSION_FLAGS.includes(argv[2]!)) {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    return EXIT.ok;
  }
  const program = buildProgram();
  commandExit = EXIT.ok;
  try {
    await program.parseAsync(argv);
    return commandExit;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof CloudRequestError) {
      process.stderr.write(`fleet: ${err.message}\n`);
      return EXIT.refused;
    }
    // A check the command ran itself (an image released with --url): the cloud's code and message.
    if (isApiError(err)) {
      process.stderr.write(`fleet: ${err.code}: ${err.message}\n`);
      return EXIT.refused;
    }
    if (err instanceof CloudUnreachableError) {
      process.stderr.write(`fleet: ${err.message}\n`);
      return EXIT.unreachable;
    }
    // The board commands' errors carry their own exit code (tools/commands/flash.ts, console.ts).
    if (err instanceof Error && typeof (err as { exitCode?: unknown }).exitCode === 'number' && !(err instanceof CommanderError)) {
      process.stderr.write(`fleet: ${err.message}\n`);
      return (err as unknown as { exitCode: number }).exitCode;
    }
    // A file named on the command line that cannot be read or written: a sentence, and a usage error.
    if (isFileSystemError(err)) {
      process.stderr.write(`fleet: ${fileErrorMessage(err)}\n`);
      return EXIT.usage;
    }
    if (err instanceof ConfigError || err instanceof UnsupportedDatabaseError || err instanceof RigError) {
      process.stderr.write(`fleet: ${err.message}\n`);
      return EXIT.config;
    }
    process.stderr.write(`fleet: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.refused;
  }
}
