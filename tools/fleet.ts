// `fleet`: the command line of the project. Exit codes: 0 done, 1 the cloud refused (the error is
// printed) or a bench scenario failed, 2 usage error, 3 the cloud could not be reached, 4 bad
// configuration or rig file; the board commands add 5 to 10 (tools/commands/flash.ts).
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { isApiError } from '../cloud/errors.ts';
import { ConfigError } from '../cloud/config-error.ts';
import { LOG_LEVELS } from '../cloud/functions.ts';
import { PACKAGE_VERSION } from '../cloud/version.ts';
import { UnsupportedDatabaseError } from '../cloud/store/index.ts';
import { CloudClient, CloudRequestError, CloudUnreachableError, path } from './client.ts';
import { cloudUrlOption } from './cli/cloud-url.ts';
import { operatorName, operatorOption } from './cli/operator.ts';
import { benchCommand } from './commands/bench.ts';
import { configuratorCommand } from './commands/configurator.ts';
import { consoleCommands } from './commands/console.ts';
import { efuseCommand } from './commands/efuse.ts';
import { enrollCommand } from './commands/enroll.ts';
import { farmCommand } from './commands/farm.ts';
import { flashCommand } from './commands/flash.ts';
import { imageCommand } from './commands/image.ts';
import { healthCommands } from './commands/health.ts';
import { auditCommand, formatStartedRollout, inventoryCommands, rolloutCommands } from './commands/inventory.ts';
import { releaseFirmware, releaseOptions, rolloutSettings, type ReleaseOptions } from './commands/release.ts';
import { monitorCommand } from './commands/monitor.ts';
import { portsCommand } from './commands/ports.ts';
import { serveCommand } from './commands/serve.ts';
import { signingCommand } from './commands/signing.ts';
import { simulateCommand } from './commands/simulate.ts';
import { virtualCommand } from './commands/virtual.ts';
import { fileErrorMessage, isFileSystemError, readFileArgument } from '../cloud/file-errors.ts';
import { RigError } from '../harness/rig-error.ts';
import { EXIT_CODES } from '../cloud/exit-codes.ts';

export const EXIT = Object.freeze({ ok: EXIT_CODES.ok, refused: EXIT_CODES.refused, usage: EXIT_CODES.usage, unreachable: EXIT_CODES.unreachable, config: EXIT_CODES.config });

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

function positiveIntOrZero(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`must be a whole number: ${value}`);
  return n;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError(`must be a positive whole number: ${value}`);
  return n;
}

let commandExit: number = EXIT.ok;

/** A super-user token minted from the JWT secret (JWT_SECRET or its file); the signing code loads only when asked. */
async function mintSuperUserToken(claims: { subject: string; ttlSeconds: number; groups?: string[]; groupsClaim?: string }): Promise<string> {
  const [{ resolveJwtSecret }, { mintToken }] = await Promise.all([import('../cloud/auth/jwt-secret.ts'), import('../cloud/auth/jwt.ts')]);
  const { secret } = resolveJwtSecret(process.env, { create: false });
  return mintToken(secret, claims);
}

export function buildProgram(): Command {
  const program = new Command('fleet')
    .description('Cloud, firmware releases, device enrollment and runtime configuration of the device fleet')
    .addOption(new Option('--cloud <url>', 'cloud base URL with its scheme, and its path prefix behind a reverse proxy (http://host/fleet-api)').env('FLEET_CLOUD_URL').default('http://127.0.0.1:8080').argParser(cloudUrlOption))
    .option('--token <jwt>', 'super-user token (env FLEET_TOKEN; otherwise minted from JWT_SECRET or the JWT secret file)')
    .addOption(new Option('--as <name>', 'who you are in the audit log: the subject of the tokens this command mints (default: user@host)').env('FLEET_OPERATOR').argParser(operatorOption))
    .showHelpAfterError()
    .addHelpText('after', '\n`fleet --version` (or -V) prints the version.')
    .exitOverride();

  const client = (): CloudClient => {
    const opts = program.opts<{ cloud: string; token?: string; as?: string }>();
    const explicit = opts.token ?? process.env.FLEET_TOKEN;
    return new CloudClient(opts.cloud, async () => {
      if (explicit) return explicit;
      return mintSuperUserToken({ subject: operatorName(opts.as), ttlSeconds: 300 });
    });
  };

  serveCommand(program);
  // The installer's web app (docs/configurator-controller-access.md).
  configuratorCommand(program);
  benchCommand(program, (code) => (commandExit = code));
  // Boards shared by many jobs through a labgrid coordinator (docs/board-farm.md).
  farmCommand(program, (code) => (commandExit = code));
  imageCommand(program, (code) => (commandExit = code));
  // Boards on serial ports and RFC 2217 servers, and virtual boards to try them on (docs/physical-rig.md).
  flashCommand(program, (code) => (commandExit = code));
  efuseCommand(program);
  consoleCommands(program, (code) => (commandExit = code));
  monitorCommand(program, (code) => (commandExit = code));
  portsCommand(program);
  virtualCommand(program);
  // A boot storm of simulated devices against a running cloud (docs/fleet-scale.md).
  simulateCommand(program, (code) => (commandExit = code));

  program
    .command('token')
    .description('Mint a super-user JWT (HS256) from JWT_SECRET or the JWT secret file, for the embedded default')
    .option('--subject <sub>', 'the sub claim: who the audit log names (default: --as, else user@host)', operatorOption)
    .option('--ttl <seconds>', 'lifetime in seconds', positiveInt, 3600)
    .option('--group <name...>', 'groups claim values', ['superuser'])
    .action(async (o: { subject?: string; ttl: number; group: string[] }) => {
      process.stdout.write((await mintSuperUserToken({ subject: o.subject ?? operatorName(program.opts<{ as?: string }>().as), ttlSeconds: o.ttl, groups: o.group, groupsClaim: process.env.JWT_GROUPS_CLAIM || 'groups' })) + '\n');
    });

  const firmware = program.command('firmware').description('Release, revoke and list firmware versions');
  releaseOptions(
    firmware
      .command('release')
      .description('Create a RELEASED version of a track; --image uploads the image, which the cloud checks and hosts (docs/firmware-images.md)')
      .argument('<class>')
      .argument('<product_hex>', '0x and 8 hex digits')
      .argument('<application>')
      .argument('<version>', 'YYYY.MM.bb')
      .option('--image <file>', 'the app image: uploaded to the cloud (checked, hosted); with --url only checked here, its size and sha256 sent')
      .option('--url <url>', 'where devices download the image, when the cloud does not host it (a CDN)')
      .option('--size <bytes>', 'image size (with --url)', positiveInt)
      .option('--sha256 <hex>', 'image SHA-256 (with --url)')
      .option('--no-image', 'no image, on purpose: a version devices already run and never download (a factory image), so that the update check tells them they are up to date'),
    positiveIntOrZero,
  ).action(async (cls: string, productHex: string, application: string, version: string, o: ReleaseOptions) => {
    print(await releaseFirmware(client(), cls, productHex, application, version, o));
    // The manifest is stdout (for scripts); what the release means for devices, stderr.
    if (o.image === false) process.stderr.write(`released ${version} without an image: devices that run it are told they are up to date; a device on an older version offered it would have nothing to download\n`);
    if (rolloutSettings(o)) {
      const { body } = await client().request('GET', path('admin', 'firmware', cls, productHex, application, version, 'rollout'));
      process.stderr.write(formatStartedRollout(body as Parameters<typeof formatStartedRollout>[0], [cls, productHex, application]));
    }
  });
  firmware
    .command('revoke')
    .description('Make a version REVOKED: it is never offered again')
    .argument('<class>')
    .argument('<product_hex>')
    .argument('<application>')
    .argument('<version>')
    .action(async (cls: string, productHex: string, application: string, version: string) => {
      print((await client().request('POST', path('admin', 'firmware', cls, productHex, application, version, 'revoke'))).body);
    });
  firmware
    .command('list')
    .description('Every version of a track, oldest first')
    .argument('<class>')
    .argument('<product_hex>')
    .argument('<application>')
    .action(async (cls: string, productHex: string, application: string) => {
      const { body } = await client().request('GET', path('admin', 'firmware', cls, productHex, application));
      type Listed = { version: string; status: string; released_at: string; size?: number; hosted: boolean; rollout: { state: string; effective_percent: number } | null; signed_by: { block: number; key_digest: string; key_label?: string } | null };
      const versions = (body as { versions: Listed[] }).versions;
      if (versions.length === 0) process.stdout.write('no versions\n');
      for (const v of versions) {
        const rollout = v.rollout ? `  rollout ${v.rollout.state} ${v.rollout.effective_percent} %` : '';
        const signed = v.signed_by ? `  signed by ${v.signed_by.key_digest.slice(0, 16)}…${v.signed_by.key_label ? ` (${v.signed_by.key_label})` : ''}` : '';
        process.stdout.write(`${v.version}  ${v.status.padEnd(8)}  ${v.released_at}${v.size ? `  ${v.size} bytes` : ''}${v.hosted ? '  hosted' : ''}${signed}${rollout}\n`);
      }
    });
  firmware
    .command('tracks')
    .description('Every track that has a release')
    .action(async () => {
      const { tracks } = (await client().request('GET', '/admin/firmware')).body as { tracks: { class: string; product_hex: string; application: string; released: number; revoked: number; latest: string | null }[] };
      if (tracks.length === 0) process.stdout.write('no tracks\n');
      for (const t of tracks) process.stdout.write(`${t.class} ${t.product_hex} ${t.application}  ${t.released} released, ${t.revoked} revoked, latest ${t.latest ?? '-'}\n`);
    });
  signingCommand(firmware, client);
  rolloutCommands(program, client);
  auditCommand(program, client);

  const device = program.command('device').description('Enroll, remove, list and show devices (the inventory), count their versions, set their labels and groups');
  enrollCommand(device, client, print);
  device
    .command('remove')
    .description('Remove a device; its stored backup is kept')
    .argument('<uuid>')
    .action(async (uuid: string) => {
      await client().request('DELETE', path('admin', 'devices', uuid));
      process.stdout.write(`removed ${uuid}\n`);
    });
  inventoryCommands(device, client);
  healthCommands(device, firmware, client);

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
