// `fleet flash --port <path|rfc2217://host:port> <image.bin | offset file … | flasher_args.json | build folder>`:
// esptool-js underneath (harness/flash/flash-board.ts): a progress bar per file, MD5 verification,
// a hard reset, then the firmware's boot line; the last line is `booted <version>`.
// Exit codes: 0 done, 2 usage, 5 the port cannot be opened, 6 no answer from the ROM, 7 wrong chip,
// 8 an image does not fit its partition or the flash, 9 verification failed, 10 the firmware did not come up,
// 11 a board of --rig failed (tools/commands/flash-rig.ts). Blocks the chip already holds are skipped
// unless --force (harness/flash/write-changed.ts, docs/rig-flashing.md).
import { InvalidArgumentError, type Command } from 'commander';
import { basename } from 'node:path';
import { chipByName, type ChipName } from '../../firmware/image/chips.ts';
import type { ResetMethod } from '../../harness/transport/reset-sequence.ts';
import { bar } from '../cli/board-lines.ts';
import { flashRigCommand } from './flash-rig.ts';
import { baudFlag, portFlag, resetMethodOption, resolvePort, resolveResetMethod, seconds } from './port-options.ts';
import type { CommandContext } from './context.ts';

function chipOption(value: string): 'auto' | ChipName {
  if (value === 'auto') return value;
  try {
    return chipByName(value).name;
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function boardIds(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').filter(Boolean)];
}

export function flashCommand(program: Command, { setExit }: CommandContext): void {
  program
    .command('flash')
    .description('Flash a board (serial port or RFC 2217) with esptool-js: an app image, offset/file pairs, or an ESP-IDF/Moddable build (flasher_args.json); verify, reset, print the version that booted')
    .argument('<inputs...>', 'image.bin | <offset> <file> … | flasher_args.json | build folder')
    .addOption(portFlag())
    .option('--rig <file>', 'flash every board of this rig file that has a port, all at once; a summary table at the end')
    .option('--board <id>', 'with --rig: only this board (repeat, or a comma-separated list)', boardIds)
    .addOption(baudFlag('baud rate after the stub is running', 921_600, 'ESPBAUD'))
    .option('--chip <name>', 'expected chip (auto: what the ROM reports)', chipOption, 'auto')
    .option('--reset-method <method>', 'classic (USB-UART bridge), usb-jtag (ESP32-S3 USB), none, or auto (from the USB ids)', resetMethodOption, 'auto')
    .option('--erase-all', 'erase the whole flash first')
    .option('--no-reset', 'stay in the flasher stub afterwards (no reset, no boot check)')
    .option('--no-compress', 'send the images uncompressed')
    .option('--force', 'write every image whole (by default 64 KB blocks the chip already holds, by MD5, are skipped)')
    .option('--boot-timeout <seconds>', 'how long to wait for the boot line', seconds, 30)
    .action(async (inputs: string[], o: { port?: string; baud: number; chip: 'auto' | ChipName; resetMethod: ResetMethod | 'auto'; reset: boolean; eraseAll?: boolean; compress: boolean; force?: boolean; bootTimeout: number; rig?: string; board?: string[] }, command: Command) => {
      const [{ flashBoard, FlashError, describeWritten }, { planFlash, FlashInputError }, { createTransport }, { productPartitions }] = await Promise.all([
        import('../../harness/flash/flash-board.ts'),
        import('../../harness/flash/inputs.ts'),
        import('../../harness/transport/open.ts'),
        import('../../firmware/image/product-partitions.ts'),
      ]);
      const table = productPartitions();
      let plan;
      try {
        plan = planFlash(inputs, table);
      } catch (err) {
        if (err instanceof FlashInputError) throw new FlashError('usage', err.message);
        throw err;
      }
      if (o.board && !o.rig) throw new FlashError('usage', '--board names boards of a rig: give --rig too');
      if (o.rig) {
        if (command.getOptionValueSource('port') === 'cli') throw new FlashError('usage', '--port and --rig: give one (the rig file names the ports)');
        if (o.chip !== 'auto') throw new FlashError('usage', "--chip does not apply to --rig: each board's chip is the rig file's");
        setExit(await flashRigCommand(plan, table, { ...o, rig: o.rig }));
        return;
      }
      const port = await resolvePort(o.port, (line) => process.stderr.write(`flash: ${line}\n`));
      const method = await resolveResetMethod(port, o.resetMethod);
      const tty = process.stderr.isTTY;
      const say = (line: string) => process.stderr.write(line + '\n');
      for (const f of plan.files) say(`flash: ${basename(f.path)} at 0x${f.address.toString(16)} (${f.data.length} bytes)`);
      const transport = await createTransport(port);
      try {
        const outcome = await flashBoard({
          transport,
          plan,
          productTable: table,
          baudRate: o.baud,
          chip: o.chip,
          resetMethod: method,
          eraseAll: o.eraseAll === true,
          compress: o.compress,
          force: o.force === true,
          reset: o.reset !== false,
          bootTimeoutMs: o.bootTimeout * 1000,
          log: (line) => /^(Chip is|MAC:|Changing baudrate|Hash of data verified|Compressed|Wrote)/.test(line) && say(`esptool: ${line}`),
          progress: (f, i, written, total) => {
            // Nothing to write (the flash already holds the image): said, no bar.
            if (total === 0) return say(`flash: ${i + 1}/${plan.files.length} ${basename(f.path)} already on the board, skipped`);
            const line = `${bar(written / total)} ${i + 1}/${plan.files.length} ${basename(f.path)}`;
            if (tty) process.stderr.write(`\r${line}${written >= total ? '\n' : ''}`);
            else if (written >= total) say(line);
          },
        });
        for (const [i, w] of outcome.written.entries()) say(`flash: ${describeWritten(basename(plan.files[i]!.path), w)}`);
        say(`flash: ${outcome.chip}, MAC ${outcome.mac}, ${outcome.flashSizeBytes / 1024 / 1024} MB flash, verified`);
        if (outcome.booted) {
          say(outcome.booted.line);
          process.stdout.write(`booted ${outcome.booted.version}\n`);
        } else process.stdout.write('left in the flasher stub (--no-reset): reset the board to run the firmware\n');
      } finally {
        await transport.disconnect().catch(() => undefined);
      }
    });
}
