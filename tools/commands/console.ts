// `fleet console -p … <command>`: one console command (docs/serial-console.md), its answer printed;
// its exit codes are CONSOLE_EXIT, each meaning as the README says it (CONSOLE_EXIT_MEANING, checked
// against the README by test/tools/monitor-reset.test.ts). (`fleet monitor` is in monitor.ts.)
import type { Command } from 'commander';
import { baudFlag, portFlag, resolvePort, seconds } from './port-options.ts';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';
import type { CommandContext } from './context.ts';

export const CONSOLE_EXIT = Object.freeze({ ok: EXIT_CODES.ok, err: EXIT_CODES.refused, usage: EXIT_CODES.usage, port: EXIT_CODES.port, no_answer: EXIT_CODES.noAnswer });

/** What each of `fleet console`'s exit codes means, in the README's words (`<code> <meaning>` there). */
export const CONSOLE_EXIT_MEANING: Readonly<Record<keyof typeof CONSOLE_EXIT, string>> = Object.freeze({
  ok: 'when the answer is `OK …`',
  err: 'when it is `ERR …`',
  usage: 'for a usage error',
  port: 'when the port cannot be opened (no such port, or another program such as `fleet monitor` holds it)',
  no_answer: 'when no answer comes within `--timeout` (the firmware is not running: a board left in its ROM download mode answers nothing)',
});

/** The README's sentence: `fleet console` exits 0 when …, 1 when …, … */
export function consoleExitSentence(): string {
  const parts = (Object.keys(CONSOLE_EXIT) as (keyof typeof CONSOLE_EXIT)[]).map((k) => `${CONSOLE_EXIT[k]} ${CONSOLE_EXIT_MEANING[k]}`);
  return `\`fleet console\` exits ${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}.`;
}

export class ConsoleCommandError extends Error {
  override name = 'ConsoleCommandError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export async function openConsole(port: string, baud: number) {
  const [{ openTransport }, { SerialConsole }, { PortUnavailableError }] = await Promise.all([
    import('../../harness/transport/open.ts'),
    import('../../harness/serial-console.ts'),
    import('../../harness/transport/transport.ts'),
  ]);
  try {
    return new SerialConsole(await openTransport(port, baud));
  } catch (err) {
    if (err instanceof PortUnavailableError) throw new ConsoleCommandError(err.message, CONSOLE_EXIT.port);
    throw err;
  }
}

export function consoleCommands(program: Command, { setExit }: CommandContext): void {
  program
    .command('console')
    .description("Send one console command to a board and print its answer (exit 1 on ERR)")
    .argument('<command...>', 'e.g. status, pubkey, "prov on"')
    .addOption(portFlag())
    .addOption(baudFlag('console baud rate', 115_200, 'MONITORBAUD'))
    .option('--timeout <seconds>', 'how long to wait for the answer', seconds, 30)
    .action(async (words: string[], o: { port?: string; baud: number; timeout: number }) => {
      const port = await resolvePort(o.port, (line) => process.stderr.write(`console: ${line}\n`));
      const console = await openConsole(port, o.baud);
      try {
        // The port closing under the command (the board's RFC 2217 server or pty gone) ends the wait at once.
        let stopWatching: () => void = () => undefined;
        const closed = new Promise<never>((_, reject) => {
          stopWatching = console.transport.onClose((why) => reject(new ConsoleCommandError(`no answer on ${port}: ${why} while waiting for it`, CONSOLE_EXIT.no_answer)));
        });
        closed.catch(() => undefined);
        const answer = await Promise.race([
          console.command(words.join(' '), o.timeout * 1000).catch((err: Error) => {
            throw new ConsoleCommandError(
              `no answer on ${port} within ${o.timeout} s (${err.message}): is the firmware running? A board left in its ROM download mode (fleet efuse … --after no-reset) answers nothing; fleet monitor -p ${port} resets it`,
              CONSOLE_EXIT.no_answer,
            );
          }),
          closed,
        ]).finally(() => stopWatching());
        process.stdout.write(answer + '\n');
        if (answer.startsWith('ERR ')) setExit(CONSOLE_EXIT.err);
      } finally {
        await console.close();
      }
    });
}
