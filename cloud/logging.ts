// Structured logging, namespaced per cloud function. Each function logs at its effective level: the
// `logging` key of its deployed configuration, or WARNING (spec 2.7). The effective levels are read
// from the store's deployments, so a deployment applies on every instance: at once on the instance
// that performed it, and within APPCONFIG_REFRESH_MS on the others.
// Records are written by pino: one child logger per function carrying its effective level, the
// spec's level names (DEBUG … CRITICAL) in the output, reserved keys a field cannot overwrite, and
// secrets (signatures, nonces, tokens, keys) redacted by path. LOG_FORMAT=pretty goes through
// pino-pretty. The volume bounds of docs/fleet-scale.md stay in front of pino.
import { pino, type Logger } from 'pino';
import { prettyFactory } from 'pino-pretty';
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

/**
 * Where records go. A plain function receives each record as an object (tests, in-memory capture); a
 * sink with `write` receives pino's JSON lines as they are (stdout), without parsing them again.
 */
export type LogSink = ((record: LogRecord) => void) & { write?: (line: string) => void };

/** The keys every record owns; a field of the same name never replaces them. */
export const RESERVED_LOG_KEYS = ['time', 'level', 'function', 'msg'] as const;

/** Paths whose values never reach the output (pino's redaction): device signatures, nonces, tokens, keys. */
export const REDACTED_LOG_PATHS = [
  'signature',
  'nonce',
  'token',
  'authorization',
  'secret',
  'password',
  'private_key',
  'key',
  '*.signature',
  '*.nonce',
  '*.token',
  '*.authorization',
  '*.secret',
  '*.password',
  '*.private_key',
  '*.key',
  'headers["x-device-signature"]',
  'headers["x-device-nonce"]',
];
export const REDACTED = '[redacted]';

/** The pino level of each of the spec's levels (pino's own numbers for the shared ones). */
const PINO_LEVEL_VALUES = { debug: 20, info: 30, warning: 40, error: 50, critical: 60 } as const;
type PinoLevel = keyof typeof PINO_LEVEL_VALUES;
const PINO_LEVEL: Record<LogLevel, PinoLevel> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warning', ERROR: 'error', CRITICAL: 'critical' };

/**
 * A field that collides with a reserved key (e.g. a `level` field, which used to turn an INFO line
 * into a CRITICAL one) is kept as `field_<key>`.
 */
function guardReserved(fields: Record<string, unknown>): Record<string, unknown> {
  let clash = false;
  for (const key of RESERVED_LOG_KEYS) if (Object.prototype.hasOwnProperty.call(fields, key)) clash = true;
  if (!clash && !Object.prototype.hasOwnProperty.call(fields, '__proto__')) return fields;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    const reserved = (RESERVED_LOG_KEYS as readonly string[]).includes(key);
    // defineProperty: a field named __proto__ stays a plain field.
    Object.defineProperty(out, reserved ? `field_${key}` : key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** One record as an object, the same shape pino writes (used for summaries written outside pino). */
export function logRecord(time: string, level: LogLevel, fn: CloudFunction, msg: string, fields?: Record<string, unknown>): LogRecord {
  return { level, time, function: fn, ...(fields ? guardReserved(fields) : {}), msg };
}

/**
 * Log output the stream has not taken yet, in bytes, past which records are dropped (and counted)
 * instead of buffered: a slow log consumer must not grow the service's memory (docs/fleet-scale.md).
 */
export const LOG_MAX_BUFFERED_BYTES = 1024 * 1024;

/** Records below WARNING written per second, across functions; the rest are counted and summarized. */
export const LOG_MAX_RECORDS_PER_SECOND = 2000;

const FUNCTION_OF_LINE = /"function":"([^"]*)"/;

/**
 * Writes pino's lines while the stream keeps up; while more than `maxBufferedBytes` wait in it, drops
 * them and then writes one WARNING `log records dropped` with the count before the next line it can
 * write. Callable with a record object too.
 */
function boundedLineSink(stream: NodeJS.WritableStream, format: (line: string) => string, maxBufferedBytes: number): LogSink {
  let dropped = 0;
  const write = (line: string) => {
    const pending = (stream as NodeJS.WritableStream & { writableLength?: number }).writableLength ?? 0;
    if (pending > maxBufferedBytes) {
      dropped++;
      return;
    }
    if (dropped > 0) {
      const fn = (FUNCTION_OF_LINE.exec(line)?.[1] ?? 'svc-func-health') as CloudFunction;
      const summary = logRecord(new Date().toISOString(), 'WARNING', fn, 'log records dropped', { dropped, reason: 'log output slower than the service' });
      stream.write(format(JSON.stringify(summary) + '\n'));
      dropped = 0;
    }
    stream.write(format(line));
  };
  return Object.assign((record: LogRecord) => write(JSON.stringify(record) + '\n'), { write });
}

export function jsonLineSink(stream: NodeJS.WritableStream = process.stdout, maxBufferedBytes = LOG_MAX_BUFFERED_BYTES): LogSink {
  return boundedLineSink(stream, (line) => line, maxBufferedBytes);
}

/** LOG_FORMAT=pretty: pino-pretty, one line per record: `[time] LEVEL: function msg {fields}`. */
export function prettySink(stream: NodeJS.WritableStream = process.stdout, maxBufferedBytes = LOG_MAX_BUFFERED_BYTES): LogSink {
  const pretty = prettyFactory({
    colorize: false,
    singleLine: true,
    translateTime: false,
    ignore: 'function',
    messageFormat: '{function} {msg}',
    customLevels: Object.entries(PINO_LEVEL_VALUES).map(([name, value]) => `${name.toUpperCase()}:${value}`).join(','),
  });
  return boundedLineSink(stream, (line) => pretty(line), maxBufferedBytes);
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
  /** The pino logger every function's child comes from. */
  readonly root: Logger<PinoLevel, boolean>;
  /** Per function, a child that writes whatever its level (the summaries of the volume bounds). */
  private readonly always = new Map<CloudFunction, Logger<PinoLevel, boolean>>();

  constructor(
    readonly levels: LogLevels,
    sink: LogSink,
    private readonly now: () => number = Date.now,
    /** Records below WARNING per second; past it they are counted and summarized (docs/fleet-scale.md). */
    private readonly maxPerSecond: number = LOG_MAX_RECORDS_PER_SECOND,
  ) {
    const write = sink.write ?? ((line: string) => sink(JSON.parse(line) as LogRecord));
    this.root = pino<PinoLevel, boolean>(
      {
        customLevels: PINO_LEVEL_VALUES,
        useOnlyCustomLevels: true,
        level: 'debug',
        base: undefined,
        timestamp: () => `,"time":"${new Date(this.now()).toISOString()}"`,
        formatters: {
          // The spec's names in the output: DEBUG, INFO, WARNING, ERROR, CRITICAL.
          level: (label) => ({ level: label.toUpperCase() }),
          log: guardReserved,
        },
        redact: { paths: REDACTED_LOG_PATHS, censor: REDACTED },
      },
      { write },
    );
  }

  private summary(fn: CloudFunction, msg: string, fields: Record<string, unknown>): void {
    let child = this.always.get(fn);
    if (!child) {
      child = this.root.child({ function: fn }, { level: 'debug' });
      this.always.set(fn, child);
    }
    child.warning(fields, msg);
  }

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
        for (const [f, count] of this.suppressed) {
          this.summary(f, 'log records suppressed', { suppressed: count, limit_per_second: this.maxPerSecond });
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
    // The function's child logger, at its effective level; a deployment changes that level, and the
    // child follows it on its next record.
    const child = this.root.child({ function: fn }, { level: PINO_LEVEL[this.levels.get(fn)] });
    const enabled = (level: LogLevel) => LEVEL_RANK[level] >= LEVEL_RANK[this.levels.get(fn)];
    const emit = (level: LogLevel) => {
      const method = PINO_LEVEL[level];
      return (msg: string, fields?: Record<string, unknown>) => {
        const effective = PINO_LEVEL[this.levels.get(fn)];
        if (child.level !== effective) child.level = effective;
        if (!child.isLevelEnabled(method)) return;
        if (!this.admit(fn, level, this.now())) return;
        if (fields) child[method](fields, msg);
        else child[method](msg);
      };
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
