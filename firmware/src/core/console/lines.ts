// The serial console's out lines in one place (docs/serial-console.md): the firmware writes them
// (console.ts), and the board's Node side and the bench read them (firmware/virtual-esp32/board.ts,
// harness/board.ts, harness/serial-board.ts), so a virtual board and a board on a serial port are
// read by the same parser. No RegExp at module level (the SDK's XS corrupts one made while
// preloading: docs/moddable-regexp.md).

/** `LOG <level> <source>: <text>`, as read back. */
export interface LogLine {
  level: string;
  source: string;
  message: string;
}

/** The events that end a boot (core/device.ts boot()): a controller's provisioning outcome, a client's. */
export const BOOT_ENDING_EVENTS = Object.freeze(['target_provisioning', 'client_provisioning', 'client_normal_mode'] as const);

/** One log line; line breaks in the text become spaces, so one record is one line. */
export function logLine(level: string, source: string, message: string): string {
  return `LOG ${level} ${source}: ${message.replace(/[\r\n]+/g, ' ')}`;
}

/** One event line: its JSON on one line. */
export function eventLine(event: Record<string, unknown>): string {
  return `EVT ${JSON.stringify(event)}`;
}

/** A LOG line's level (as written: INFO, WARNING…), source and text; undefined for any other line. */
export function parseLogLine(line: string): LogLine | undefined {
  const m = /^LOG (\w+) ([\w-]+): (.*)$/.exec(line);
  return m ? { level: m[1]!, source: m[2]!, message: m[3]! } : undefined;
}

/** An EVT line's event; undefined for any other line, or one whose JSON is not an object. */
export function parseEventLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('EVT ')) return undefined;
  try {
    const event: unknown = JSON.parse(line.slice(4));
    return event !== null && typeof event === 'object' && !Array.isArray(event) ? (event as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A RegExp for line waiters (`waitFor`): an EVT line whose event ends a boot. */
export function bootEndingEventPattern(): RegExp {
  return new RegExp(`^EVT \\{"event":"(${BOOT_ENDING_EVENTS.join('|')})"`);
}
