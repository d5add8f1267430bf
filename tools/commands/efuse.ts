// `fleet efuse summary|burn-key|burn -p <path|rfc2217://host:port>`: a board's eFuses through its ROM
// bootloader with esptool-js (READ_REG, WRITE_REG, GET_SECURITY_INFO), as espefuse does, on a real
// board or a virtual one. The board is reset into download mode as its reset method says; at the end
// --after says what becomes of it, as esptool's does: hard-reset (the default: it runs its firmware
// again, its boot line awaited) or no-reset (it stays in the ROM loader). One line on standard error
// says which state it is left in (docs/rom-after.md).
//   - summary: the eFuses as `espefuse summary` shows them (MAC, chip revision, key purposes and
//     protection, secure boot, SECURE_VERSION); the registers and GET_SECURITY_INFO are checked
//     against each other.
//   - burn-key --digest <pem> --block BLOCK_KEYn --purpose SECURE_BOOT_DIGESTn: the SHA-256 of the
//     RSA-3072 public key (`espefuse burn-key-digest`), its purpose, both write-protected.
//   - burn --secure-boot-en | --revoke-key N | --secure-version N.
// Burning is one-way: it needs --yes, or BURN typed at the prompt when standard input is a terminal;
// what the fuses hold is checked first (harness/flash/efuse-burn.ts) and the fuses are read back.
// Exit codes: 0 done (or nothing to burn), 1 not confirmed at the prompt (nothing burned), 2 usage
// (no --yes without a terminal, a key file that is not an RSA-3072 PEM), 5 the port cannot be opened,
// 6 no answer from the ROM, 7 not an ESP32-S3 or its two readings of the key purposes disagree, 8
// refused: the fuses already hold something that forbids the burn (nothing written), 9 burned but
// the fuses read back do not say what was asked.
import { Command, InvalidArgumentError, Option } from 'commander';
import { createInterface } from 'node:readline/promises';
import { isatty } from 'node:tty';
import type { BurnPlan, BurnRequest } from '../../harness/flash/efuse-burn.ts';
import type { RomSession } from '../../harness/flash/esptool.ts';
import type { ResetMethod } from '../../harness/transport/reset-sequence.ts';
import { afterFlag, portFlag, resetMethodOption, resolvePort, resolveResetMethod, type AfterAction } from './port-options.ts';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';
import type { CommandContext } from './context.ts';

export const EFUSE_EXIT = Object.freeze({ declined: EXIT_CODES.refused, usage: EXIT_CODES.usage, port: EXIT_CODES.port, no_answer: EXIT_CODES.noAnswer, unexpected: EXIT_CODES.efuseUnexpected, refused: EXIT_CODES.efuseRefused, not_burned: EXIT_CODES.efuseNotBurned });

export class EfuseCommandError extends Error {
  override name = 'EfuseCommandError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

function formatOption(value: string): 'text' | 'json' {
  if (value === 'text' || value === 'json') return value;
  throw new InvalidArgumentError(`must be text or json: ${value}`);
}

interface PortOptions {
  port?: string;
  resetMethod: ResetMethod | 'auto';
  after: AfterAction;
}

/** -p/--port, --reset-method and --after, as every eFuse command takes them. */
function withPortOptions(command: Command): Command {
  return command
    .addOption(portFlag())
    .option('--reset-method <method>', 'classic (USB-UART bridge), usb-jtag (ESP32-S3 USB), none (the board already waits in download mode), or auto', resetMethodOption, 'auto')
    .addOption(afterFlag());
}

/** How long --after hard-reset waits for the firmware's boot line (as fleet flash's default). */
const BOOT_WAIT_MS = 30_000;

/**
 * Opens the port, resets the board into download mode, connects to its ROM and runs `work` with its
 * registers; the errors of the port and the ROM become sentences with their exit codes.
 */
async function withBoardRom<T>(o: PortOptions, work: (rom: RomSession) => Promise<T>): Promise<T> {
  const port = await resolvePort(o.port, (line) => process.stderr.write(`efuse: ${line}\n`));
  const method = await resolveResetMethod(port, o.resetMethod);
  const [{ withRomSession }, { beforeFor, noRomAnswer }, { EfuseSummaryError }, { createTransport }, { WebSerialAdapter }, { NoModemLinesError, PortUnavailableError }] = await Promise.all([
    import('../../harness/flash/esptool.ts'),
    import('../../harness/flash/flash-board.ts'),
    import('../../harness/flash/efuse-summary.ts'),
    import('../../harness/transport/open.ts'),
    import('../../harness/flash/web-serial.ts'),
    import('../../harness/transport/transport.ts'),
  ]);
  const transport = await createTransport(port);
  // Once the ROM has answered, the board is in download mode: --after decides what becomes of it,
  // whether the work succeeded or was refused.
  let inLoader = false;
  try {
    await transport.connect(115200);
    return await withRomSession(new WebSerialAdapter(transport), beforeFor(method), (rom) => {
      inLoader = true;
      return work(rom);
    });
  } catch (err) {
    if (err instanceof EfuseCommandError) throw err;
    if (err instanceof EfuseSummaryError) throw new EfuseCommandError(err.message, EFUSE_EXIT.unexpected);
    if (err instanceof PortUnavailableError) throw new EfuseCommandError(err.message, EFUSE_EXIT.port);
    if (err instanceof NoModemLinesError) throw new EfuseCommandError(`${err.message}; hold BOOT, press RST and use --reset-method none`, EFUSE_EXIT.no_answer);
    const message = err instanceof Error ? err.message : String(err);
    if (/Failed to connect|Timeout|timed out/i.test(message)) throw new EfuseCommandError(noRomAnswer(port, method, message), EFUSE_EXIT.no_answer);
    throw err;
  } finally {
    if (inLoader && transport.connected) process.stderr.write(`efuse: ${await leaveBoard(transport, method, o.after)}\n`);
    await transport.disconnect().catch(() => undefined);
  }
}

/** Does what --after says with a board in the ROM loader; the sentence saying the state it is left in. */
async function leaveBoard(transport: import('../../harness/transport/transport.ts').SerialTransport, method: ResetMethod, after: AfterAction): Promise<string> {
  const loader = 'the board is left in the ROM download mode';
  if (after === 'no-reset') return `${loader} (--after no-reset): reset it to run its firmware (fleet monitor resets it as it opens the port)`;
  const [{ SEQUENCES }, { resetAndWaitForBoot, FlashError }] = await Promise.all([import('../../harness/transport/reset-sequence.ts'), import('../../harness/flash/flash-board.ts')]);
  if (SEQUENCES[method].hard === '') return `${loader}: reset method ${method} cannot reset it; press its RST button to run its firmware`;
  try {
    const booted = await resetAndWaitForBoot(transport, method, BOOT_WAIT_MS);
    return `hard reset: the board runs its firmware again (${booted.role} ${booted.version}, ${booted.build}); --after no-reset leaves it in the ROM loader`;
  } catch (err) {
    if (err instanceof FlashError) return `hard reset, but the firmware did not come up: ${err.message}`;
    return `the hard reset failed, so ${loader}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

const WARNING = [
  'WARNING: burning eFuses is one-way: it cannot be undone.',
  '  A wrong key digest, secure boot with no image signed by a burned key, or a revoked key can leave',
  '  the board unable to boot for good.',
];

/** Asks before the burn: --yes, or BURN typed at the terminal; a usage error without either. */
function confirmation(yes: boolean | undefined): (plan: BurnPlan) => Promise<void> {
  return async (plan) => {
    process.stdout.write(`${plan.lines.join('\n')}\n${WARNING.join('\n')}\n`);
    if (yes) return;
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      const answer = await rl.question('Type BURN (in capitals) to burn, anything else to stop: ');
      if (answer.trim() !== 'BURN') throw new EfuseCommandError('not confirmed: nothing was burned', EFUSE_EXIT.declined);
    } finally {
      rl.close();
    }
  };
}

/** Burning needs a yes said beforehand when nobody is at a terminal to say it. */
function requireConfirmation(yes: boolean | undefined): void {
  // isatty(0), not process.stdin.isTTY: reading that getter would open standard input.
  if (!yes && !isatty(0)) throw new EfuseCommandError('burning eFuses cannot be undone: give --yes to confirm (standard input is not a terminal to ask at)', EFUSE_EXIT.usage);
}

async function runBurn(o: PortOptions & { yes?: boolean }, req: BurnRequest): Promise<void> {
  requireConfirmation(o.yes);
  const [{ burnEfuses, BurnCheckError, BurnRefusedError }, { readEfuses }] = await Promise.all([import('../../harness/flash/efuse-burn.ts'), import('../../harness/flash/esptool.ts')]);
  const outcome = await withBoardRom(o, async (rom) => {
    try {
      return await burnEfuses(rom, (addresses) => readEfuses(rom, addresses), req, confirmation(o.yes));
    } catch (err) {
      if (err instanceof BurnRefusedError) throw new EfuseCommandError(`refused, nothing burned: ${err.message}`, EFUSE_EXIT.refused);
      if (err instanceof BurnCheckError) throw new EfuseCommandError(err.message, EFUSE_EXIT.not_burned);
      throw err;
    }
  });
  if (!outcome.after) {
    process.stdout.write(`${outcome.plan.lines.join('\n')}\n`);
    return;
  }
  process.stdout.write(`burned and read back: ${outcome.plan.steps.map((s) => s.what).join('; ')}\n`);
}

function keyBlockOption(value: string): number {
  const m = /^BLOCK_KEY([0-5])$/i.exec(value) ?? /^BLOCK([4-9])$/i.exec(value);
  if (!m) throw new InvalidArgumentError(`must be a key block, BLOCK_KEY0 to BLOCK_KEY5 (or BLOCK4 to BLOCK9): ${value}`);
  return /^BLOCK_KEY/i.test(value) ? Number(m[1]) : Number(m[1]) - 4;
}

function digestPurposeOption(value: string): 'SECURE_BOOT_DIGEST0' | 'SECURE_BOOT_DIGEST1' | 'SECURE_BOOT_DIGEST2' {
  if (value === 'SECURE_BOOT_DIGEST0' || value === 'SECURE_BOOT_DIGEST1' || value === 'SECURE_BOOT_DIGEST2') return value;
  throw new InvalidArgumentError(`a key digest's purpose is SECURE_BOOT_DIGEST0, SECURE_BOOT_DIGEST1 or SECURE_BOOT_DIGEST2: ${value}`);
}

function wholeNumber(max: number, what: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n > max) throw new InvalidArgumentError(`${what} is a whole number from 0 to ${max}: ${value}`);
    return n;
  };
}

/** The Secure Boot v2 digest of a PEM key (public, or private without a passphrase) to burn. */
async function digestOfPem(path: string): Promise<Buffer> {
  const { loadVerifyingKey } = await import('../signing-keys.ts');
  const { digest } = loadVerifyingKey(path, undefined, { name: `--digest ${path}`, encrypted: 'burn its public key instead (openssl pkey -in it -pubout -out pub.pem)' });
  return Buffer.from(digest, 'hex');
}

export function efuseCommand(program: Command, _ctx: CommandContext): void {
  const efuse = program.command('efuse').description("A board's eFuses, read and burned through its ROM bootloader (as espefuse does)");
  withPortOptions(
    efuse.command('summary').description('Print the eFuses (MAC, chip revision, key purposes and read/write protection, secure boot, SECURE_VERSION) like `espefuse summary`'),
  )
    .option('--format <format>', 'text or json', formatOption, 'text')
    .action(async (o: PortOptions & { format: 'text' | 'json' }) => {
      const [{ decodeEfuses, formatSummary, summaryRegisters }, { readEfuses }] = await Promise.all([import('../../harness/flash/efuse-summary.ts'), import('../../harness/flash/esptool.ts')]);
      const summary = await withBoardRom(o, async (rom) => decodeEfuses(await readEfuses(rom, summaryRegisters())));
      process.stdout.write(o.format === 'json' ? `${JSON.stringify(summary, null, 2)}\n` : `${formatSummary(summary).join('\n')}\n`);
    });

  withPortOptions(
    efuse
      .command('burn-key')
      .description('Burn the SHA-256 digest of an RSA-3072 public key into a key block as SECURE_BOOT_DIGESTn, write-protected (espefuse burn-key-digest); one-way')
      .requiredOption('--digest <pem>', 'the public key (or the private key, whose public half is used), PEM as openssl writes it')
      .requiredOption('--block <block>', 'an empty key block: BLOCK_KEY0 to BLOCK_KEY5', keyBlockOption)
      .requiredOption('--purpose <purpose>', 'SECURE_BOOT_DIGEST0, SECURE_BOOT_DIGEST1 or SECURE_BOOT_DIGEST2', digestPurposeOption)
      .option('--yes', 'burn without asking (burning cannot be undone)'),
  ).action(async (o: PortOptions & { digest: string; block: number; purpose: 'SECURE_BOOT_DIGEST0' | 'SECURE_BOOT_DIGEST1' | 'SECURE_BOOT_DIGEST2'; yes?: boolean }) => {
    const digest = await digestOfPem(o.digest);
    await runBurn(o, { kind: 'key-digest', block: o.block, purpose: o.purpose, digest, source: o.digest });
  });

  withPortOptions(
    efuse
      .command('burn')
      .description('Burn one secure boot eFuse: SECURE_BOOT_EN, a SECURE_BOOT_KEY_REVOKEn bit, or raise SECURE_VERSION; one-way')
      .addOption(new Option('--secure-boot-en', 'SECURE_BOOT_EN: from the next reset only images signed by a burned, unrevoked key boot'))
      .addOption(new Option('--revoke-key <slot>', 'SECURE_BOOT_KEY_REVOKE<slot> (0 to 2): the key of that digest slot is never trusted again').argParser(wholeNumber(2, 'a secure boot key slot')))
      .addOption(new Option('--secure-version <n>', 'raise the anti-rollback counter SECURE_VERSION to n (0 to 16)').argParser(wholeNumber(16, 'SECURE_VERSION')))
      .option('--yes', 'burn without asking (burning cannot be undone)'),
  ).action(async (o: PortOptions & { secureBootEn?: boolean; revokeKey?: number; secureVersion?: number; yes?: boolean }) => {
    const asked: BurnRequest[] = [];
    if (o.secureBootEn) asked.push({ kind: 'secure-boot-en' });
    if (o.revokeKey !== undefined) asked.push({ kind: 'revoke-key', slot: o.revokeKey });
    if (o.secureVersion !== undefined) asked.push({ kind: 'secure-version', version: o.secureVersion });
    if (asked.length !== 1) throw new EfuseCommandError('give exactly one of --secure-boot-en, --revoke-key <slot>, --secure-version <n>', EFUSE_EXIT.usage);
    await runBurn(o, asked[0]!);
  });
}
