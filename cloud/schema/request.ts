// Request checks from the declared shapes (./api.ts): a value that does not fit is refused with the
// catalog code its schema names (x-error-code), details naming the field, the value and what was
// expected, and a message saying the same (`product_hex: expected 0x followed by 8 hexadecimal
// digits, got "0xZZ"`).
import type { Static, TSchema } from '@sinclair/typebox';
import { ApiError, type ErrorCode } from '../errors.ts';
import { checker, describeProblem, detailValue, type Checker, type Problem } from './validator.ts';

export { checker };

/** The refusal for a failed check: the first problem decides; unknown keys are all named. */
export function refusal(problems: Problem[], fallback: ErrorCode, allowedKeys?: string[]): ApiError {
  const unknown = problems.filter((p) => p.keyword === 'additionalProperties');
  const first = unknown[0] ?? problems[0];
  const code = ((first?.code as ErrorCode | undefined) ?? fallback) satisfies ErrorCode;
  if (!first) return new ApiError(code);
  if (unknown.length > 0) {
    const keys = unknown.slice(0, 16).map((p) => p.field.slice(0, 64));
    return new ApiError(code, { unknown_keys: keys, ...(allowedKeys ? { allowed: allowedKeys } : {}) }, `Unknown key: ${keys.join(', ')}`);
  }
  return new ApiError(code, { field: first.field, value: detailValue(first.value), expected: first.expected }, describeProblem(first));
}

/** Returns `value` typed by the schema, or throws the refusal. */
export function checked<S extends TSchema>(check: Checker<S>, value: unknown, fallback: ErrorCode): Static<S> {
  if (check(value)) return value;
  const props = (check.schema as { properties?: Record<string, unknown> }).properties;
  throw refusal(check.problems(), fallback, props ? Object.keys(props) : undefined);
}
