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

export function jsonLineSink(stream: NodeJS.WritableStream = process.stdout): LogSink {
  return (record) => {
    stream.write(JSON.stringify(record) + '\n');
  };
}

export function prettySink(stream: NodeJS.WritableStream = process.stdout): LogSink {
  return ({ time, level, function: fn, msg, ...fields }) => {
    const extra = Object.keys(fields).length ? ' ' + JSON.stringify(fields) : '';
    stream.write(`${time} ${level.padEnd(8)} ${fn} ${msg}${extra}\n`);
  };
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

  constructor(
    readonly levels: LogLevels,
    private readonly sink: LogSink,
    private readonly now: () => number = Date.now,
  ) {}

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
      this.sink(logRecord(new Date(this.now()).toISOString(), level, fn, msg, fields));
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
