// `fleet efuse summary -p <path|rfc2217://host:port>`: a board's eFuses as `espefuse summary` shows
// them (MAC, chip revision, key purposes and protection, secure boot, SECURE_VERSION), read from the
// ROM bootloader with esptool-js (READ_REG and GET_SECURITY_INFO), which the command checks against
// each other. The board is reset into download mode as its reset method says, and left there.
// Exit codes: 0 done, 2 usage, 5 the port cannot be opened, 6 no answer from the ROM, 7 not an
// ESP32-S3 or its two readings of the key purposes disagree.
import { Command, InvalidArgumentError } from 'commander';
import type { ResetMethod } from '../../harness/transport/reset-sequence.ts';
import { portFlag, resetMethodOption, resolvePort, resolveResetMethod } from './port-options.ts';

export const EFUSE_EXIT = { usage: 2, port: 5, no_answer: 6, unexpected: 7 } as const;

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

export function efuseCommand(program: Command): void {
  const efuse = program.command('efuse').description("A board's eFuses, read through its ROM bootloader (as espefuse does)");
  efuse
    .command('summary')
    .description('Print the eFuses (MAC, chip revision, key purposes and read/write protection, secure boot, SECURE_VERSION) like `espefuse summary`')
    .addOption(portFlag())
    .option('--reset-method <method>', 'classic (USB-UART bridge), usb-jtag (ESP32-S3 USB), none (the board already waits in download mode), or auto', resetMethodOption, 'auto')
    .option('--format <format>', 'text or json', formatOption, 'text')
    .action(async (o: { port?: string; resetMethod: ResetMethod | 'auto'; format: 'text' | 'json' }) => {
      const port = await resolvePort(o.port, (line) => process.stderr.write(`efuse: ${line}\n`));
      const method = await resolveResetMethod(port, o.resetMethod);
      const [{ readEfuseRegisters }, { decodeEfuses, EfuseSummaryError, formatSummary, summaryRegisters }, { createTransport }, { WebSerialAdapter }, { NoModemLinesError, PortUnavailableError }] = await Promise.all([
        import('../../harness/flash/esptool.ts'),
        import('../../harness/flash/efuse-summary.ts'),
        import('../../harness/transport/open.ts'),
        import('../../harness/flash/web-serial.ts'),
        import('../../harness/transport/transport.ts'),
      ]);
      const transport = await createTransport(port);
      let reading;
      try {
        await transport.connect(115200);
        reading = await readEfuseRegisters(new WebSerialAdapter(transport), method === 'classic' ? 'default_reset' : method === 'usb-jtag' ? 'usb_reset' : 'no_reset', summaryRegisters());
      } catch (err) {
        if (err instanceof PortUnavailableError) throw new EfuseCommandError(err.message, EFUSE_EXIT.port);
        if (err instanceof NoModemLinesError) throw new EfuseCommandError(`${err.message}; hold BOOT, press RST and use --reset-method none`, EFUSE_EXIT.no_answer);
        const message = err instanceof Error ? err.message : String(err);
        if (/Failed to connect|Timeout|timed out/i.test(message)) {
          throw new EfuseCommandError(`no answer from the ROM bootloader on ${port} (reset method ${method}): is it the board's port, is it powered, does the reset method fit its wiring? (esptool-js: ${message})`, EFUSE_EXIT.no_answer);
        }
        throw err;
      } finally {
        await transport.disconnect().catch(() => undefined);
      }
      let summary;
      try {
        summary = decodeEfuses(reading);
      } catch (err) {
        if (err instanceof EfuseSummaryError) throw new EfuseCommandError(err.message, EFUSE_EXIT.unexpected);
        throw err;
      }
      process.stdout.write(o.format === 'json' ? `${JSON.stringify(summary, null, 2)}\n` : `${formatSummary(summary).join('\n')}\n`);
    });
}
