// `fleet ports`: the local serial ports with their USB vendor:product ids; `*` marks Espressif's own
// USB, `+` a known USB-UART bridge; each with the reset method that fits it (--json for scripts).
import type { Command } from 'commander';
import type { CommandContext } from './context.ts';

export function portsCommand(program: Command, _ctx: CommandContext): void {
  program
    .command('ports')
    .description("List serial ports with USB ids, marking Espressif's (*) and the common USB-UART bridges (+)")
    .option('--json', 'print the list as JSON')
    .action(async (o: { json?: boolean }) => {
      const { listSerialPorts, formatPort } = await import('../../harness/transport/usb-ports.ts');
      const ports = await listSerialPorts();
      if (o.json) return void process.stdout.write(JSON.stringify(ports, null, 2) + '\n');
      if (ports.length === 0) process.stdout.write('no serial ports\n');
      for (const p of ports) process.stdout.write(formatPort(p) + '\n');
    });
}
