// `fleet monitor -p …`: the serial console, coloured (boot log and console protocol), with a log file.
// The board is reset when the port opens, as idf.py monitor does, so the boot log is seen from its
// start (--no-reset keeps the board as it is; docs/monitor-reset.md). On a terminal: lines typed are
// sent to the board, Ctrl-T Ctrl-R resets it, Ctrl-T Ctrl-P resets it into download mode, Ctrl-]
// (or Ctrl-C) quits. Without one (CI, a pipe, /dev/null) no keys are read, and an empty or closed
// standard input is not a quit: the monitor runs until SIGINT or SIGTERM,
// --timeout, or --until (exit 0 on a matching line, 1 when the time-out or the port's end comes first,
// as pytest-embedded's expect lets CI wait for a boot line). Lines are written as they come.
import { InvalidArgumentError, type Command } from 'commander';
import { appendFileSync } from 'node:fs';
import { isatty } from 'node:tty';
import type { ResetMethod } from '../../harness/transport/reset-sequence.ts';
import { onStopSignals } from '../cli/stop-signals.ts';
import { openConsole } from './console.ts';
import { baudFlag, portFlag, resetMethodOption, resolvePort, resolveResetMethod, seconds } from './port-options.ts';
import type { CommandContext } from './context.ts';

function regexOption(value: string): RegExp {
  try {
    return new RegExp(value);
  } catch (err) {
    throw new InvalidArgumentError(`not a regular expression: ${(err as Error).message}`);
  }
}

type Ending = { why: 'quit' | 'signal' | 'matched' | 'timeout' } | { why: 'closed'; detail: string };

export function monitorCommand(program: Command, { setExit }: CommandContext): void {
  program
    .command('monitor')
    .description('The serial console of a board: coloured boot log and console lines, a log file, Ctrl-T Ctrl-R reset, Ctrl-T Ctrl-P download mode, Ctrl-] quit')
    .addOption(portFlag())
    .addOption(baudFlag('console baud rate', 115_200, 'MONITORBAUD'))
    .option('--log <file>', 'append every line, with a timestamp, to this file')
    .option('--reset-method <method>', 'classic, usb-jtag, none, or auto', resetMethodOption, 'auto')
    .option('--no-reset', 'keep the board as it is when the port opens (by default it is reset, as idf.py monitor does, to show its boot)')
    .option('--no-colour', 'print lines as they are')
    .option('--until <regex>', 'stop at the first line that matches (exit 0); exit 1 if --timeout or the end of the port comes first', regexOption)
    .option('--timeout <seconds>', 'stop after this long (exit 0, or 1 with --until)', seconds)
    .addHelpText(
      'after',
      '\nWithout a terminal on standard input (CI, a pipe, /dev/null) no keys are read: the monitor runs until\nSIGINT or SIGTERM, --timeout or --until. Example, waiting in CI for the boot line:\n  fleet monitor -p /dev/ttyUSB0 --until "boot: controller .* firmware" --timeout 60 < /dev/null',
    )
    .action(async (o: { port?: string; baud: number; log?: string; resetMethod: ResetMethod | 'auto'; reset: boolean; colour: boolean; until?: RegExp; timeout?: number }) => {
      const signals = onStopSignals('monitor');
      try {
        const [{ colourLine }, { runResetSequence, SEQUENCES }, { NoModemLinesError }] = await Promise.all([
          import('../../harness/console-colours.ts'),
          import('../../harness/transport/reset-sequence.ts'),
          import('../../harness/transport/transport.ts'),
        ]);
        // A log file that cannot be written is said now, not at the first line (a usage error, exit 2).
        if (o.log) appendFileSync(o.log, '');
        const port = await resolvePort(o.port, (line) => process.stderr.write(`monitor: ${line}\n`));
        const method = await resolveResetMethod(port, o.resetMethod);
        const console = await openConsole(port, o.baud);
        // isatty(0), not process.stdin.isTTY: reading that getter would open standard input.
        const terminal = isatty(0);
        const stdin = terminal ? process.stdin : undefined;
        // Raw before the header: keys typed once it shows reach the board as they are.
        stdin?.setRawMode(true);
        const paint = o.colour && process.stdout.isTTY ? colourLine : (l: string) => l;
        const stops = [o.until ? `until ${o.until}` : '', o.timeout ? `for ${o.timeout} s` : ''].filter(Boolean).join(', ');
        const keys = terminal ? 'Ctrl-T Ctrl-R reset, Ctrl-T Ctrl-P download mode, Ctrl-] quit' : 'no terminal: no keys, SIGINT or SIGTERM stops it';
        process.stderr.write(`monitor: ${port} at ${o.baud} baud, reset ${method}${o.log ? `, log ${o.log}` : ''}${stops ? `, ${stops}` : ''}; ${keys}\n`);
        let timer: NodeJS.Timeout | undefined;
        let onKey: ((chunk: Buffer) => void) | undefined;
        // Once it ends, lines still arriving (the rest of the chunk that held the matching line) are not written:
        // with --until, the matching line is the last one.
        let ended = false;
        const ending = await new Promise<Ending>((resolveEnding) => {
          const end = (e: Ending) => {
            ended = true;
            resolveEnding(e);
          };
          console.onLineReceived = (line) => {
            if (ended) return;
            process.stdout.write(paint(line) + '\n');
            if (o.log) appendFileSync(o.log, `${new Date().toISOString()} ${line}\n`);
            if (o.until?.test(line)) end({ why: 'matched' });
          };
          console.transport.onClose((why) => end({ why: 'closed', detail: why }));
          void signals.stopped.then(() => end({ why: 'signal' }));
          if (o.timeout) timer = setTimeout(() => end({ why: 'timeout' }), o.timeout * 1000);
          // `doing` is said as it starts; `what` names it when the reset method cannot do it.
          const reset = (sequence: string, doing: string, what: string) => {
            if (!sequence) return void process.stderr.write(`monitor: reset method ${method} cannot ${what}: use the board's buttons\n`);
            process.stderr.write(`monitor: ${doing}\n`);
            void runResetSequence(console.transport, sequence).catch((err: Error) =>
              process.stderr.write(`monitor: ${err.message}${err instanceof NoModemLinesError ? " (a board of fleet virtual: its rfc2217:// port carries DTR and RTS)" : ''}\n`),
            );
          };
          // Once the lines are read, so that the boot log is seen from its first line.
          if (o.reset) reset(SEQUENCES[method].hard, 'resetting the board (--no-reset keeps it as it is)', 'reset the board');
          if (!stdin) return;
          let menu = false;
          let typed = '';
          onKey = (chunk: Buffer) => {
            for (const byte of chunk) {
              if (menu) {
                menu = false;
                if (byte === 0x12) reset(SEQUENCES[method].hard, 'resetting the board', 'reset the board');
                else if (byte === 0x10) reset(SEQUENCES[method].download, 'resetting into download mode', 'reset it into download mode');
                continue;
              }
              if (byte === 0x14) menu = true; // Ctrl-T
              else if (byte === 0x1d || byte === 0x03) return end({ why: 'quit' }); // Ctrl-] or Ctrl-C
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
        });
        clearTimeout(timer);
        if (stdin) {
          stdin.setRawMode(false);
          if (onKey) stdin.off('data', onKey);
          stdin.destroy();
        }
        if (ending.why === 'closed') process.stderr.write(`monitor: ${ending.detail}\n`);
        if (o.until && (ending.why === 'timeout' || ending.why === 'closed')) {
          process.stderr.write(`monitor: no line matched ${o.until}${ending.why === 'timeout' ? ` within ${o.timeout} s` : ''}\n`);
          setExit(1);
        }
        signals.closing(port);
        await console.close();
      } finally {
        signals.dispose();
      }
    });
}
