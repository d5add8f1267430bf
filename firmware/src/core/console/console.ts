// The serial console's line protocol (docs/serial-console.md). Out: `LOG <level> <source>: <text>`,
// `EVT <json>`, `OLED <json array of lines>`, and one answer per command: `OK <json>` or
// `ERR <code> <text>`. In: the commands of COMMANDS below.

import { eventLine, logLine } from './lines.ts';

export const COMMANDS = Object.freeze(['help', 'status', 'reboot', 'prov on', 'prov off', 'pubkey', 'password <new>', 'cloud <url>', 'backup now', 'ota check', 'health', 'health now', 'health interval <seconds>', 'factory-reset', 'fault record <controllers|clients> <uuid>', 'fault memory', 'fault throw', 'fault hang', 'fault clear'] as const);

export type CommandHandler = (args: string) => Promise<unknown> | unknown;

export class ConsoleProtocol {
  private readonly handlers = new Map<string, CommandHandler>();

  constructor(private readonly write: (line: string) => void) {}

  on(command: string, handler: CommandHandler): void {
    this.handlers.set(command, handler);
  }

  log(level: string, source: string, message: string): void {
    this.write(logLine(level, source, message));
  }

  event(event: Record<string, unknown>): void {
    this.write(eventLine(event));
  }

  oled(lines: string[]): void {
    this.write(`OLED ${JSON.stringify(lines)}`);
  }

  /** Runs one input line; the longest command name that prefixes it wins ("prov on" before "prov"). */
  async dispatch(line: string): Promise<void> {
    const text = line.trim();
    if (text === '') return;
    let best: string | undefined;
    for (const name of this.handlers.keys()) {
      if ((text === name || text.startsWith(name + ' ')) && (best === undefined || name.length > best.length)) best = name;
    }
    if (best === undefined) {
      this.write(`ERR unknown_command ${JSON.stringify(text.slice(0, 40))}; try help`);
      return;
    }
    try {
      const result = await this.handlers.get(best)!(text.slice(best.length).trim());
      this.write(`OK ${JSON.stringify(result ?? {})}`);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      this.write(`ERR ${typeof code === 'string' ? code : 'failed'} ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
