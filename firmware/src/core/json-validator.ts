// A streaming JSON syntax check with bounded memory: a 512 KB backup received during controller
// provisioning is validated chunk by chunk as it is written to flash (spec 3.6 step 7, "Backup parse
// or write failed"), never held whole. Checks RFC 8259 syntax; values are not kept, and nothing is
// allocated per byte (the heap of a board is small and its collector slow).

import { utf8Decode } from './bytes.ts';

const enum S { Value, AfterValue, ObjectKeyOrEnd, ObjectKey, Colon, ArrayValueOrEnd, String, Escape, Unicode, Number, Literal, Done }

/** Where a number is in its grammar (RFC 8259 section 6). */
const enum N { Minus, Zero, Int, Dot, Frac, Exp, ExpSign, ExpDigits }

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
  private state = S.Value;
  private readonly stack: number[] = []; // 0x7b '{' or 0x5b '['
  private stringIsKey = false;
  private unicodeLeft = 0;
  private literal = '';
  private literalAt = 0;
  private number = N.Int;
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
    if (this.failed === null && this.state === S.Number) this.endNumber();
    if (this.failed === null && this.state === S.AfterValue && this.stack.length === 0) this.state = S.Done;
    if (this.failed !== null) throw new Error(`invalid JSON: ${this.failed}`);
    if (this.state !== S.Done) throw new Error('invalid JSON: unexpected end');
  }

  private fail(why: string): void {
    this.failed = why;
  }

  private step(c: number): void {
    switch (this.state) {
      case S.String:
        if (c === 0x22) this.state = this.stringIsKey ? S.Colon : S.AfterValue;
        else if (c === 0x5c) this.state = S.Escape;
        else if (c < 0x20) this.fail('control character in a string');
        return;
      case S.Escape:
        if (c === 0x75) {
          this.state = S.Unicode;
          this.unicodeLeft = 4;
        } else if (isEscape(c)) this.state = S.String;
        else this.fail('bad escape');
        return;
      case S.Unicode:
        if (!isHex(c)) return this.fail('bad \\u escape');
        if (--this.unicodeLeft === 0) this.state = S.String;
        return;
      case S.Literal:
        if (c !== this.literal.charCodeAt(this.literalAt++)) return this.fail('bad literal');
        if (this.literalAt === this.literal.length) this.state = S.AfterValue;
        return;
      case S.Number:
        if (this.numberStep(c)) return;
        this.endNumber();
        if (this.failed === null) this.step(c);
        return;
    }
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) return;
    switch (this.state) {
      case S.Value:
      case S.ArrayValueOrEnd:
        if (this.state === S.ArrayValueOrEnd && c === 0x5d) return this.close(0x5b);
        return this.startValue(c);
      case S.ObjectKeyOrEnd:
        if (c === 0x7d) return this.close(0x7b);
        return this.startKey(c);
      case S.ObjectKey:
        return this.startKey(c);
      case S.Colon:
        if (c !== 0x3a) return this.fail('expected :');
        this.state = S.Value;
        return;
      case S.AfterValue: {
        const top = this.stack[this.stack.length - 1];
        if (top === undefined) return this.fail('text after the value');
        if (c === 0x2c) this.state = top === 0x7b ? S.ObjectKey : S.Value;
        else if (c === 0x7d || c === 0x5d) this.close(c === 0x7d ? 0x7b : 0x5b);
        else this.fail('expected , or a closing bracket');
        return;
      }
      case S.Done:
        return this.fail('text after the value');
    }
  }

  private startKey(c: number): void {
    if (c !== 0x22) return this.fail('expected a key');
    this.stringIsKey = true;
    this.state = S.String;
  }

  private startValue(c: number): void {
    if (c === 0x7b || c === 0x5b) {
      if (this.stack.length >= MAX_DEPTH) return this.fail(TOO_DEEP);
      this.stack.push(c);
      this.state = c === 0x7b ? S.ObjectKeyOrEnd : S.ArrayValueOrEnd;
    } else if (c === 0x22) {
      this.stringIsKey = false;
      this.state = S.String;
    } else if (c === 0x2d || isDigit(c)) {
      this.number = c === 0x2d ? N.Minus : c === 0x30 ? N.Zero : N.Int;
      this.state = S.Number;
    } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
      this.literal = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
      this.literalAt = 1;
      this.state = S.Literal;
    } else {
      this.fail('expected a value');
    }
  }

  /** Consumes one character of a number; false when the character ends it. */
  private numberStep(c: number): boolean {
    const d = isDigit(c);
    switch (this.number) {
      case N.Minus:
        if (!d) return false;
        this.number = c === 0x30 ? N.Zero : N.Int;
        return true;
      case N.Zero:
      case N.Int:
      case N.Frac:
        if (d && this.number !== N.Zero) return true;
        if (c === 0x2e && this.number !== N.Frac) this.number = N.Dot;
        else if (c === 0x65 || c === 0x45) this.number = N.Exp;
        else return false;
        return true;
      case N.Dot:
        if (!d) return false;
        this.number = N.Frac;
        return true;
      case N.Exp:
        if (c === 0x2b || c === 0x2d) this.number = N.ExpSign;
        else if (d) this.number = N.ExpDigits;
        else return false;
        return true;
      case N.ExpSign:
        if (!d) return false;
        this.number = N.ExpDigits;
        return true;
      case N.ExpDigits:
        return d;
    }
  }

  /** A number may end only after a digit. */
  private endNumber(): void {
    if (this.number === N.Minus || this.number === N.Dot || this.number === N.Exp || this.number === N.ExpSign) return this.fail('bad number');
    this.state = S.AfterValue;
  }

  private close(open: number): void {
    if (this.stack.pop() !== open) return this.fail('mismatched bracket');
    this.state = S.AfterValue;
  }
}

/** Why a text is not acceptable JSON: `tooDeep` when only its nesting is at fault. */
export class JsonTextError extends Error {
  constructor(
    readonly why: string,
    readonly tooDeep: boolean,
  ) {
    super(`invalid JSON: ${why}`);
    this.name = 'JsonTextError';
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
