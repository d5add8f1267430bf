// `fleet console -p … <command>`: one console command (docs/serial-console.md), its answer printed;
// exit 0 on `OK …`, 1 on `ERR …`, 5 when the port cannot be opened, 6 when no answer comes.
// `fleet monitor --port …`: the serial console, coloured (boot log and console protocol), with a log
// file and reset keys: Ctrl-T Ctrl-R resets the board, Ctrl-T Ctrl-P resets it into download mode,
// Ctrl-] quits. Lines typed are sent to the board.
import type { Command } from 'commander';
import { appendFileSync } from 'node:fs';
import { baudFlag, portFlag, resetMethodOption, resolvePort, resolveResetMethod, seconds } from './port-options.ts';
import type { ResetMethod } from '../../harness/transport/reset-sequence.ts';

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

  program
    .command('monitor')
    .description('The serial console of a board: coloured boot log and console lines, a log file, Ctrl-T Ctrl-R reset, Ctrl-T Ctrl-P download mode, Ctrl-] quit')
    .addOption(portFlag())
    .addOption(baudFlag('console baud rate', 115_200, 'MONITORBAUD'))
    .option('--log <file>', 'append every line, with a timestamp, to this file')
    .option('--reset-method <method>', 'classic, usb-jtag, none, or auto', resetMethodOption, 'auto')
    .option('--no-colour', 'print lines as they are')
    .action(async (o: { port?: string; baud: number; log?: string; resetMethod: ResetMethod | 'auto'; colour: boolean }) => {
      const [{ colourLine }, { runResetSequence, SEQUENCES }] = await Promise.all([import('../../harness/console-colours.ts'), import('../../harness/transport/reset-sequence.ts')]);
      // A log file that cannot be written is said now, not at the first line (a usage error, exit 2).
      if (o.log) appendFileSync(o.log, '');
      const port = await resolvePort(o.port, (line) => process.stderr.write(`monitor: ${line}\n`));
      const method = await resolveResetMethod(port, o.resetMethod);
      const console = await openConsole(port, o.baud);
      const paint = o.colour && process.stdout.isTTY ? colourLine : (l: string) => l;
      process.stderr.write(`monitor: ${port} at ${o.baud} baud, reset ${method}${o.log ? `, log ${o.log}` : ''}; Ctrl-T Ctrl-R reset, Ctrl-T Ctrl-P download mode, Ctrl-] quit\n`);
      console.onLineReceived = (line) => {
        process.stdout.write(paint(line) + '\n');
        if (o.log) appendFileSync(o.log, `${new Date().toISOString()} ${line}\n`);
      };
      await new Promise<void>((resolve) => {
        const stdin = process.stdin;
        const raw = stdin.isTTY === true;
        if (raw) stdin.setRawMode(true);
        let menu = false;
        let typed = '';
        const finish = () => {
          if (raw) stdin.setRawMode(false);
          stdin.off('data', onKey);
          // A piped stdin that is only paused keeps the process alive after the monitor ends.
          stdin.destroy();
          resolve();
        };
        const reset = (sequence: string, what: string) => {
          if (!sequence) return void process.stderr.write(`monitor: reset method ${method} cannot ${what}: use the board's buttons\n`);
          process.stderr.write(`monitor: ${what}\n`);
          void runResetSequence(console.transport, sequence).catch((err: Error) => process.stderr.write(`monitor: ${err.message}\n`));
        };
        const onKey = (chunk: Buffer) => {
          for (const byte of chunk) {
            if (menu) {
              menu = false;
              if (byte === 0x12) reset(SEQUENCES[method].hard, 'resetting the board');
              else if (byte === 0x10) reset(SEQUENCES[method].download, 'resetting into download mode');
              continue;
            }
            if (byte === 0x14) menu = true; // Ctrl-T
            else if (byte === 0x1d || byte === 0x03) return finish(); // Ctrl-] or Ctrl-C
            else if (!raw) void console.transport.write(Uint8Array.of(byte));
            else if (byte === 0x0d) {
              process.stdout.write('\n');
              void console.write(typed);
              typed = '';
            } else if (byte === 0x7f) typed = typed.slice(0, -1);
            else {
              typed += String.fromCharCode(byte);
              process.stdout.write(String.fromCharCode(byte));
            }
          }
        };
        stdin.on('data', onKey);
        stdin.once('end', finish);
        console.transport.onClose((why) => {
          process.stderr.write(`monitor: ${why}\n`);
          finish();
        });
        process.once('SIGINT', finish);
        process.once('SIGTERM', finish);
      });
      await console.close();
    });
}
