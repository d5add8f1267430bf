// One interface for every board of a rig, whatever its kind (virtual; serial and RFC 2217, serial-board.ts):
// power/reset, the serial console (lines and commands), HTTP on each interface, what the OLED shows,
// the event log. Scenarios use only this. The OLED and the event log are read from the console
// (`OLED` and `LOG` lines, docs/serial-console.md), so a real board is read the same way.
import { parseLogLine } from '../firmware/src/core/console/lines.ts';
import type { BoardSpec } from './rig.ts';

export type Iface = 'ethernet' | 'softap' | 'station';

export interface HttpAnswer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  json: any;
}

export interface EventLine {
  level: string;
  source: string;
  message: string;
}

export interface BenchBoard {
  readonly spec: BoardSpec;
  /**
   * Physical boards (and virtual ones driven as such): before the scenario, read the identity from
   * the board into `spec`, bring it to its factory state and hold it in reset (serial-board.ts).
   */
  prepare?(): Promise<void>;
  /** Powers the board on (boots the firmware). */
  start(): Promise<void>;
  /** Power-cycles the board; flash survives. */
  reset(): Promise<void>;
  stop(): Promise<void>;
  /** Every console line received since start, oldest first. */
  consoleLines(): string[];
  /** Virtual boards: what the virtual chip saw beside the UART (XS traces, its own notes), for a failure's report. */
  hostLines?(): string[];
  /** Sends a console command and resolves with its `OK …`/`ERR …` answer. */
  command(line: string, timeoutMs?: number): Promise<string>;
  /** Resolves with the first console line (from `fromIndex`) matching, or rejects naming what was awaited. */
  waitForLine(pattern: RegExp, timeoutMs: number, fromIndex?: number): Promise<string>;
  http(iface: Iface, method: string, path: string, o?: { headers?: Record<string, string>; body?: string | Buffer }): Promise<HttpAnswer>;
  /** The lines on the OLED now. */
  display(): string[];
  events(): EventLine[];
  /** Virtual boards: where the board stands (moving it changes what its radios reach). */
  moveTo?(position: { x: number; y: number }): void;
}

export { TimeoutError } from './transport/transport.ts';

/** Parses the OLED and LOG lines of a console transcript. */
export function displayFrom(lines: string[]): string[] {
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!;
    if (l.startsWith('OLED ')) {
      try {
        return JSON.parse(l.slice(5)) as string[];
      } catch {
        return [];
      }
    }
  }
  return [];
}

export function eventsFrom(lines: string[]): EventLine[] {
  const out: EventLine[] = [];
  for (const l of lines) {
    const logged = parseLogLine(l);
    if (logged) out.push({ ...logged, level: logged.level.toLowerCase() });
  }
  return out;
}

export async function httpAnswer(res: Response): Promise<HttpAnswer> {
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, text, json };
}
