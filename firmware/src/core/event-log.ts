// The event log on flash (docs/hal.md: 64 entries on the configuration partition), portable so that
// every platform keeps it the same way. One small file per entry, `/log/<10-digit sequence>`, each
// written atomically (temporary file, then rename): a power cut loses at most the entry being
// written, never an earlier one, and never leaves a half-written entry under its name. The oldest
// entries beyond the capacity are removed after each append. docs/storage.md.
import type { EventLevel, EventLog } from '../hal/output.ts';
import type { Storage } from '../hal/storage.ts';
import { utf8Encode } from './bytes.ts';
import { EVENT_LOG_FOLDER, writeFileAtomically } from './flash.ts';
import { parseJson } from './json-validator.ts';

export const EVENT_LOG_CAPACITY = 64;
/** Longer messages are cut: the OLED page shows 21 characters, the console has the whole line. */
const MAX_MESSAGE_CHARS = 240;
const LEVELS: readonly EventLevel[] = Object.freeze(['info', 'warning', 'error']);

export type EventEntry = { time: number; level: EventLevel; source: string; message: string };

export class FlashEventLog implements EventLog {
  /** Entry names on the flash, oldest first; read once, then kept up to date (nothing else writes /log). */
  private names: string[] | null = null;

  constructor(
    private readonly storage: Storage,
    private readonly now: () => number,
    private readonly capacity = EVENT_LOG_CAPACITY,
  ) {}

  append(level: EventLevel, source: string, message: string): void {
    const names = this.entryNames();
    const seq = names.length > 0 ? Number(names[names.length - 1]) + 1 : 1;
    const name = String(seq).padStart(10, '0');
    const entry: EventEntry = { time: this.now(), level, source, message: message.slice(0, MAX_MESSAGE_CHARS) };
    try {
      writeFileAtomically(this.storage, `${EVENT_LOG_FOLDER}/${name}`, utf8Encode(JSON.stringify(entry)));
      names.push(name);
      while (names.length > this.capacity) this.storage.remove(`${EVENT_LOG_FOLDER}/${names.shift()}`);
    } catch (err) {
      this.names = null; // read the folder again next time
      throw err;
    }
  }

  recent(count: number): EventEntry[] {
    if (count <= 0) return [];
    const out: EventEntry[] = [];
    for (const name of this.entryNames().slice(-count)) {
      const entry = this.read(`${EVENT_LOG_FOLDER}/${name}`);
      if (entry) out.push(entry);
    }
    return out;
  }

  /** Entry names, oldest first (temporary files and anything else are not entries). */
  private entryNames(): string[] {
    this.names ??= this.storage
      .list(EVENT_LOG_FOLDER)
      .map((p) => p.slice(EVENT_LOG_FOLDER.length + 1))
      .filter((n) => /^\d{10}$/.test(n)) // not a module-level RegExp: docs/moddable-regexp.md
      .sort();
    return this.names;
  }

  private read(path: string): EventEntry | null {
    const size = this.storage.size(path);
    if (size === null || size > 4096) return null;
    try {
      const v = parseJson(this.storage.read(path, 0, size)) as Partial<EventEntry>;
      if (typeof v.time !== 'number' || !LEVELS.includes(v.level as EventLevel) || typeof v.source !== 'string' || typeof v.message !== 'string') return null;
      return { time: v.time, level: v.level as EventLevel, source: v.source, message: v.message };
    } catch {
      return null;
    }
  }
}
