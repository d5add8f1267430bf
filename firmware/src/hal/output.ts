// What a person sees or a harness reads: the 128x64 OLED (8 lines of 21 characters), the event log
// page, and the serial console.

export interface Display {
  /** Replaces the screen with up to 8 lines. */
  show(lines: string[]): void;
}

export type EventLevel = 'info' | 'warning' | 'error';

export interface EventLog {
  append(level: EventLevel, source: string, message: string): void;
  /** The newest entries, oldest first. */
  recent(count: number): { time: number; level: EventLevel; source: string; message: string }[];
}

export interface SerialConsole {
  writeLine(line: string): void;
  onLine(handler: (line: string) => void): void;
}
