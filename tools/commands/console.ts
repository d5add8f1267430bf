// `fleet console -p … <command>`: one console command (docs/serial-console.md), its answer printed;
// exit 0 on `OK …`, 1 on `ERR …`, 5 when the port cannot be opened, 6 when no answer comes.
// (`fleet monitor` is in monitor.ts.)
import type { Command } from 'commander';
import { baudFlag, portFlag, resolvePort, seconds } from './port-options.ts';

export const CONSOLE_EXIT = { ok: 0, err: 1, port: 5, no_answer: 6 } as const;

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

export function consoleCommands(program: Command, setExit: (code: number) => void): void {
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
        const answer = await console.command(words.join(' '), o.timeout * 1000).catch((err: Error) => {
          throw new ConsoleCommandError(`no answer on ${port} within ${o.timeout} s (${err.message})`, CONSOLE_EXIT.no_answer);
        });
        process.stdout.write(answer + '\n');
        if (answer.startsWith('ERR ')) setExit(CONSOLE_EXIT.err);
      } finally {
        await console.close();
      }
    });
}
