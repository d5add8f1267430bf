// A tiny assertion library for the portable test cases: they run on Node (vitest) and inside XS,
// where no test framework exists.

export class AssertionError extends Error {
  override name = 'AssertionError';
}

function show(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) => (x instanceof Uint8Array ? `<${x.length} bytes>` : typeof x === 'bigint' ? `${x}n` : x));
  } catch {
    return String(v);
  }
}

export function equal<T>(actual: T, expected: T, what = 'value'): void {
  if (actual !== expected) throw new AssertionError(`${what}: expected ${show(expected)}, got ${show(actual)}`);
}

/**
 * The value as compared by deepEqual: bytes in full (hex), not abbreviated as show() prints them for
 * messages. (Comparing show()'s `<32 bytes>` made every byte comparison a length comparison.)
 */
function canonical(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x) =>
      x instanceof Uint8Array ? `<bytes ${Array.from(x, (b) => (b < 16 ? '0' : '') + b.toString(16)).join('')}>` : typeof x === 'bigint' ? `${x}n` : x,
    );
  } catch {
    return String(v);
  }
}

export function deepEqual(actual: unknown, expected: unknown, what = 'value'): void {
  if (canonical(actual) !== canonical(expected)) {
    const full = actual instanceof Uint8Array || expected instanceof Uint8Array;
    throw new AssertionError(`${what}: expected ${full ? canonical(expected) : show(expected)}, got ${full ? canonical(actual) : show(actual)}`);
  }
}

export function ok(condition: unknown, what: string): void {
  if (!condition) throw new AssertionError(`expected ${what}`);
}

export async function rejects(fn: () => Promise<unknown>, pattern: RegExp, what: string): Promise<void> {
  try {
    await fn();
  } catch (err) {
    const text = err instanceof Error ? `${err.name} ${err.message} ${(err as { code?: string }).code ?? ''}` : String(err);
    if (!pattern.test(text)) throw new AssertionError(`${what}: error ${show(text)} does not match ${pattern}`);
    return;
  }
  throw new AssertionError(`${what}: expected a rejection`);
}

export interface TestCase {
  name: string;
  run(): Promise<void>;
}
