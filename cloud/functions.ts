// The cloud's own handler groups are the "functions" whose runtime configuration appconfig manages
// (DESIGN.md section 4, spec 2.7).

export const FUNCTION_PREFIX = 'svc-func-';

export const CLOUD_FUNCTIONS = [
  'svc-func-ota',
  'svc-func-backup',
  'svc-func-appconfig',
  'svc-func-health',
  'svc-func-admin',
] as const;

export type CloudFunction = (typeof CLOUD_FUNCTIONS)[number];

export function isCloudFunction(name: string): name is CloudFunction {
  return (CLOUD_FUNCTIONS as readonly string[]).includes(name);
}

export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A function with no deployed configuration runs at WARNING (spec 2.7). */
export const DEFAULT_LOG_LEVEL: LogLevel = 'WARNING';

export const LEVEL_RANK: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40, CRITICAL: 50 };

/** Levels are accepted in any case and stored upper case. */
export function parseLogLevel(value: unknown): LogLevel | null {
  if (typeof value !== 'string') return null;
  const upper = value.trim().toUpperCase();
  return (LOG_LEVELS as readonly string[]).includes(upper) ? (upper as LogLevel) : null;
}
