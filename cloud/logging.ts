// Structured logging, namespaced per cloud function. Each function logs at its effective level: the
// `logging` key of its deployed configuration, or WARNING (spec 2.7). The effective levels are read
// from the store's deployments, so a deployment applies on every instance: at once on the instance
// that performed it, and within APPCONFIG_REFRESH_MS on the others.
import type { CloudStore } from './store/types.ts';
import {
  CLOUD_FUNCTIONS,
  DEFAULT_LOG_LEVEL,
  LEVEL_RANK,
  parseLogLevel,
  type CloudFunction,
  type LogLevel,
} from './functions.ts';

export interface LogRecord {
  time: string;
  level: LogLevel;
  function: CloudFunction;
  msg: string;
  [field: string]: unknown;
}

export type LogSink = (record: LogRecord) => void;

/** The keys every record owns; a field of the same name never replaces them. */
export const RESERVED_LOG_KEYS = ['time', 'level', 'function', 'msg'] as const;

/**
 * One record: the reserved keys first and always ours. A field that collides with one (e.g. a
 * `level` field, which used to turn an INFO line into a CRITICAL one) is kept as `field_<key>`.
 */
export function logRecord(time: string, level: LogLevel, fn: CloudFunction, msg: string, fields?: Record<string, unknown>): LogRecord {
  const record: LogRecord = { time, level, function: fn, msg };
  if (fields) {
    for (const [key, value] of Object.entries(fields)) {
      const reserved = (RESERVED_LOG_KEYS as readonly string[]).includes(key);
      // defineProperty: a field named __proto__ stays a plain field.
      Object.defineProperty(record, reserved ? `field_${key}` : key, { value, enumerable: true, writable: true, configurable: true });
    }
  }
  return record;
}

/**
 * Log output the stream has not taken yet, in bytes, past which records are dropped (and counted)
 * instead of buffered: a slow log consumer must not grow the service's memory (docs/fleet-scale.md).
 */
export const LOG_MAX_BUFFERED_BYTES = 1024 * 1024;

/** Records below WARNING written per second, across functions; the rest are counted and summarized. */
export const LOG_MAX_RECORDS_PER_SECOND = 2000;

/**
 * Writes lines while the stream keeps up; while more than `maxBufferedBytes` wait in it, drops records
 * and then writes one WARNING `log records dropped` with the count before the next line it can write.
 */
function boundedLineSink(stream: NodeJS.WritableStream, format: (record: LogRecord) => string, maxBufferedBytes: number): LogSink {
  let dropped = 0;
  return (record) => {
    const pending = (stream as NodeJS.WritableStream & { writableLength?: number }).writableLength ?? 0;
    if (pending > maxBufferedBytes) {
      dropped++;
      return;
    }
    if (dropped > 0) {
      stream.write(format(logRecord(record.time, 'WARNING', record.function, 'log records dropped', { dropped, reason: 'log output slower than the service' })));
      dropped = 0;
    }
    stream.write(format(record));
  };
}

export function jsonLineSink(stream: NodeJS.WritableStream = process.stdout, maxBufferedBytes = LOG_MAX_BUFFERED_BYTES): LogSink {
  return boundedLineSink(stream, (record) => JSON.stringify(record) + '\n', maxBufferedBytes);
}

export function prettySink(stream: NodeJS.WritableStream = process.stdout, maxBufferedBytes = LOG_MAX_BUFFERED_BYTES): LogSink {
  return boundedLineSink(
    stream,
    ({ time, level, function: fn, msg, ...fields }) => {
      const extra = Object.keys(fields).length ? ' ' + JSON.stringify(fields) : '';
      return `${time} ${level.padEnd(8)} ${fn} ${msg}${extra}\n`;
    },
    maxBufferedBytes,
  );
}

export interface FunctionLogger {
  readonly functionName: CloudFunction;
  enabled(level: LogLevel): boolean;
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warning(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  critical(msg: string, fields?: Record<string, unknown>): void;
}

/** Keeps the effective level of every function, refreshed from the store. */
export class LogLevels {
  private readonly levels = new Map<CloudFunction, LogLevel>();
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(private readonly store: CloudStore) {}

  get(fn: CloudFunction): LogLevel {
    return this.levels.get(fn) ?? DEFAULT_LOG_LEVEL;
  }

  snapshot(): Record<CloudFunction, LogLevel> {
    const out = {} as Record<CloudFunction, LogLevel>;
    for (const fn of CLOUD_FUNCTIONS) out[fn] = this.get(fn);
    return out;
  }

  /** Re-reads the deployed levels now. Concurrent callers share one read. */
  refresh(): Promise<void> {
    this.refreshing ??= this.store
      .listDeployments()
      .then((deployments) => {
        this.levels.clear();
        for (const fn of CLOUD_FUNCTIONS) {
          const level = parseLogLevel(deployments.get(fn)?.configuration.logging);
          if (level) this.levels.set(fn, level);
        }
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  start(intervalMs: number, onError: (err: unknown) => void): void {
    this.stop();
    this.timer = setInterval(() => {
      this.refresh().catch(onError);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

export class LogRegistry {
  private readonly loggers = new Map<CloudFunction, FunctionLogger>();
  /** The second (epoch s) being counted, records below WARNING in it, and those suppressed per function. */
  private second = -1;
  private inSecond = 0;
  private readonly suppressed = new Map<CloudFunction, number>();

  constructor(
    readonly levels: LogLevels,
    private readonly sink: LogSink,
    private readonly now: () => number = Date.now,
    /** Records below WARNING per second; past it they are counted and summarized (docs/fleet-scale.md). */
    private readonly maxPerSecond: number = LOG_MAX_RECORDS_PER_SECOND,
  ) {}

  /**
   * At DEBUG every request logs; at a boot storm's rate that is more output than the service should
   * spend on. Records below WARNING beyond maxPerSecond in one second are not written; the first
   * record of a later second is preceded by one WARNING `log records suppressed` per function with
   * the count. WARNING and above are never suppressed.
   */
  private admit(fn: CloudFunction, level: LogLevel, nowMs: number): boolean {
    const second = Math.floor(nowMs / 1000);
    if (second !== this.second) {
      this.second = second;
      this.inSecond = 0;
      if (this.suppressed.size > 0) {
        const time = new Date(nowMs).toISOString();
        for (const [f, count] of this.suppressed) {
          this.sink(logRecord(time, 'WARNING', f, 'log records suppressed', { suppressed: count, limit_per_second: this.maxPerSecond }));
        }
        this.suppressed.clear();
      }
    }
    if (LEVEL_RANK[level] >= LEVEL_RANK.WARNING) return true;
    if (++this.inSecond <= this.maxPerSecond) return true;
    this.suppressed.set(fn, (this.suppressed.get(fn) ?? 0) + 1);
    return false;
  }

  logger(fn: CloudFunction): FunctionLogger {
    let logger = this.loggers.get(fn);
    if (!logger) {
      logger = this.makeLogger(fn);
      this.loggers.set(fn, logger);
    }
    return logger;
  }

  private makeLogger(fn: CloudFunction): FunctionLogger {
    const enabled = (level: LogLevel) => LEVEL_RANK[level] >= LEVEL_RANK[this.levels.get(fn)];
    const emit = (level: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
      if (!enabled(level)) return;
      const nowMs = this.now();
      if (!this.admit(fn, level, nowMs)) return;
      this.sink(logRecord(new Date(nowMs).toISOString(), level, fn, msg, fields));
    };
    return {
      functionName: fn,
      enabled,
      debug: emit('DEBUG'),
      info: emit('INFO'),
      warning: emit('WARNING'),
      error: emit('ERROR'),
      critical: emit('CRITICAL'),
    };
  }
}
