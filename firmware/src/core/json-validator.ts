// A streaming JSON syntax check with bounded memory: a 512 KB backup received during controller
// provisioning is validated chunk by chunk as it is written to flash (spec 3.6 step 7, "Backup parse
// or write failed"), never held whole. Checks RFC 8259 syntax; values are not kept, and nothing is
// allocated per byte (the heap of a board is small and its collector slow).

import { utf8Decode } from './bytes.ts';

// States and number positions are plain numbers, not TypeScript enums: an enum compiles to a
// module-level object, which a preloaded module (the firmware's manifest) would have to alias in RAM.
const VALUE = 0, AFTER_VALUE = 1, OBJECT_KEY_OR_END = 2, OBJECT_KEY = 3, COLON = 4, ARRAY_VALUE_OR_END = 5, STRING = 6, ESCAPE = 7, UNICODE = 8, NUMBER = 9, LITERAL = 10, DONE = 11;

/** Where a number is in its grammar (RFC 8259 section 6). */
const NUM_MINUS = 0, NUM_ZERO = 1, NUM_INT = 2, NUM_DOT = 3, NUM_FRAC = 4, NUM_EXP = 5, NUM_EXP_SIGN = 6, NUM_EXP_DIGITS = 7;

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** The characters allowed after a backslash: " \ / b f n r t (u is handled apart). */
const isEscape = (c: number) => c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74;

/**
 * The deepest nesting accepted anywhere the firmware reads JSON. XS parses recursively on a small
 * native stack (a board's task stack is a few KB): 4,000 nested brackets overflow it and kill the
 * engine, so text is checked with this validator, which keeps its own bounded stack, before
 * JSON.parse sees it. 64 levels are far more than any record, manifest or backup needs.
 */
export const MAX_JSON_DEPTH = 64;
const MAX_DEPTH = MAX_JSON_DEPTH;
const TOO_DEEP = 'nested too deeply';

export class JsonValidator {
  private state: number = VALUE;
  private readonly stack: number[] = []; // 0x7b '{' or 0x5b '['
  private stringIsKey = false;
  private unicodeLeft = 0;
  private literal = '';
  private literalAt = 0;
  private number: number = NUM_INT;
  private failed: string | null = null;

  /** Feeds bytes (UTF-8; multi-byte sequences only matter inside strings, which accept them). */
  update(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length && this.failed === null; i++) this.step(chunk[i]!);
  }

  /** Feeds one UTF-16 unit of a string (non-ASCII units only occur inside strings, which accept them). */
  step1(c: number): void {
    if (this.failed === null) this.step(c > 0x7f ? 0x80 : c);
  }

  /** Why the text failed, once it has; null while it is still acceptable. */
  get why(): string | null {
    return this.failed;
  }

  /** Throws unless the bytes fed so far are exactly one JSON value (with white space around). */
  finish(): void {
    if (this.failed === null && this.state === NUMBER) this.endNumber();
    if (this.failed === null && this.state === AFTER_VALUE && this.stack.length === 0) this.state = DONE;
    if (this.failed !== null) throw new Error(`invalid JSON: ${this.failed}`);
    if (this.state !== DONE) throw new Error('invalid JSON: unexpected end');
  }

  private fail(why: string): void {
    this.failed = why;
  }

  private step(c: number): void {
    switch (this.state) {
      case STRING:
        if (c === 0x22) this.state = this.stringIsKey ? COLON : AFTER_VALUE;
        else if (c === 0x5c) this.state = ESCAPE;
        else if (c < 0x20) this.fail('control character in a string');
        return;
      case ESCAPE:
        if (c === 0x75) {
          this.state = UNICODE;
          this.unicodeLeft = 4;
        } else if (isEscape(c)) this.state = STRING;
        else this.fail('bad escape');
        return;
      case UNICODE:
        if (!isHex(c)) return this.fail('bad \\u escape');
        if (--this.unicodeLeft === 0) this.state = STRING;
        return;
      case LITERAL:
        if (c !== this.literal.charCodeAt(this.literalAt++)) return this.fail('bad literal');
        if (this.literalAt === this.literal.length) this.state = AFTER_VALUE;
        return;
      case NUMBER:
        if (this.numberStep(c)) return;
        this.endNumber();
        if (this.failed === null) this.step(c);
        return;
    }
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) return;
    switch (this.state) {
      case VALUE:
      case ARRAY_VALUE_OR_END:
        if (this.state === ARRAY_VALUE_OR_END && c === 0x5d) return this.close(0x5b);
        return this.startValue(c);
      case OBJECT_KEY_OR_END:
        if (c === 0x7d) return this.close(0x7b);
        return this.startKey(c);
      case OBJECT_KEY:
        return this.startKey(c);
      case COLON:
        if (c !== 0x3a) return this.fail('expected :');
        this.state = VALUE;
        return;
      case AFTER_VALUE: {
        const top = this.stack[this.stack.length - 1];
        if (top === undefined) return this.fail('text after the value');
        if (c === 0x2c) this.state = top === 0x7b ? OBJECT_KEY : VALUE;
        else if (c === 0x7d || c === 0x5d) this.close(c === 0x7d ? 0x7b : 0x5b);
        else this.fail('expected , or a closing bracket');
        return;
      }
      case DONE:
        return this.fail('text after the value');
    }
  }

  private startKey(c: number): void {
    if (c !== 0x22) return this.fail('expected a key');
    this.stringIsKey = true;
    this.state = STRING;
  }

  private startValue(c: number): void {
    if (c === 0x7b || c === 0x5b) {
      if (this.stack.length >= MAX_DEPTH) return this.fail(TOO_DEEP);
      this.stack.push(c);
      this.state = c === 0x7b ? OBJECT_KEY_OR_END : ARRAY_VALUE_OR_END;
    } else if (c === 0x22) {
      this.stringIsKey = false;
      this.state = STRING;
    } else if (c === 0x2d || isDigit(c)) {
      this.number = c === 0x2d ? NUM_MINUS : c === 0x30 ? NUM_ZERO : NUM_INT;
      this.state = NUMBER;
    } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
      this.literal = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
      this.literalAt = 1;
      this.state = LITERAL;
    } else {
      this.fail('expected a value');
    }
  }

  /** Consumes one character of a number; false when the character ends it. */
  private numberStep(c: number): boolean {
    const d = isDigit(c);
    switch (this.number) {
      case NUM_MINUS:
        if (!d) return false;
        this.number = c === 0x30 ? NUM_ZERO : NUM_INT;
        return true;
      case NUM_ZERO:
      case NUM_INT:
      case NUM_FRAC:
        if (d && this.number !== NUM_ZERO) return true;
        if (c === 0x2e && this.number !== NUM_FRAC) this.number = NUM_DOT;
        else if (c === 0x65 || c === 0x45) this.number = NUM_EXP;
        else return false;
        return true;
      case NUM_DOT:
        if (!d) return false;
        this.number = NUM_FRAC;
        return true;
      case NUM_EXP:
        if (c === 0x2b || c === 0x2d) this.number = NUM_EXP_SIGN;
        else if (d) this.number = NUM_EXP_DIGITS;
        else return false;
        return true;
      case NUM_EXP_SIGN:
        if (!d) return false;
        this.number = NUM_EXP_DIGITS;
        return true;
      default: // NUM_EXP_DIGITS
        return d;
    }
  }

  /** A number may end only after a digit. */
  private endNumber(): void {
    if (this.number === NUM_MINUS || this.number === NUM_DOT || this.number === NUM_EXP || this.number === NUM_EXP_SIGN) return this.fail('bad number');
    this.state = AFTER_VALUE;
  }

  private close(open: number): void {
    if (this.stack.pop() !== open) return this.fail('mismatched bracket');
    this.state = AFTER_VALUE;
  }
}

/** Why a text is not acceptable JSON: `tooDeep` when only its nesting is at fault. */
export class JsonTextError extends Error {
  // A field (defined on the instance), not `this.name =` in the constructor: Error.prototype is
  // frozen in the firmware's preloaded archive, and assigning over its read-only `name` throws.
  override name = 'JsonTextError';
  constructor(
    readonly why: string,
    readonly tooDeep: boolean,
  ) {
    super(`invalid JSON: ${why}`);
  }
}

/**
 * JSON.parse for text from outside (a request body, a peer's answer, a file): checked first with
 * the validator, so nesting deeper than MAX_JSON_DEPTH is refused instead of overflowing the stack.
 */
export function parseJson(text: Uint8Array | string): unknown {
  const bytes = typeof text === 'string' ? null : text;
  const v = new JsonValidator();
  if (bytes) v.update(bytes);
  else for (let i = 0; i < (text as string).length; i++) v.step1((text as string).charCodeAt(i));
  try {
    v.finish();
  } catch {
    throw new JsonTextError(v.why ?? 'unexpected end', v.why === TOO_DEEP);
  }
  return JSON.parse(typeof text === 'string' ? text : utf8Decode(text));
}
