// A streaming JSON syntax check with bounded memory: a 512 KB backup received during controller
// provisioning is validated chunk by chunk as it is written to flash (spec 3.6 step 7, "Backup parse
// or write failed"), never held whole. Checks RFC 8259 syntax; values are not kept.

const enum S { Value, AfterValue, ObjectKeyOrEnd, ObjectKey, Colon, ArrayValueOrEnd, String, Escape, Unicode, Number, Literal, Done }

const MAX_DEPTH = 64;

export class JsonValidator {
  private state = S.Value;
  private readonly stack: number[] = []; // 0x7b '{' or 0x5b '['
  private stringIsKey = false;
  private unicodeLeft = 0;
  private literal = '';
  private literalAt = 0;
  private numberText = '';
  private failed: string | null = null;

  /** Feeds bytes (UTF-8; multi-byte sequences only matter inside strings, which accept them). */
  update(chunk: Uint8Array): void {
    for (let i = 0; i < chunk.length && this.failed === null; i++) this.step(chunk[i]!);
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
        } else if ('"\\/bfnrt'.includes(String.fromCharCode(c))) this.state = S.String;
        else this.fail('bad escape');
        return;
      case S.Unicode:
        if (!/[0-9a-fA-F]/.test(String.fromCharCode(c))) return this.fail('bad \\u escape');
        if (--this.unicodeLeft === 0) this.state = S.String;
        return;
      case S.Literal:
        if (c !== this.literal.charCodeAt(this.literalAt++)) return this.fail('bad literal');
        if (this.literalAt === this.literal.length) this.state = S.AfterValue;
        return;
      case S.Number:
        if (/[0-9eE+\-.]/.test(String.fromCharCode(c))) {
          if (this.numberText.length > 64) return this.fail('number too long');
          this.numberText += String.fromCharCode(c);
          return;
        }
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
      if (this.stack.length >= MAX_DEPTH) return this.fail('nested too deeply');
      this.stack.push(c);
      this.state = c === 0x7b ? S.ObjectKeyOrEnd : S.ArrayValueOrEnd;
    } else if (c === 0x22) {
      this.stringIsKey = false;
      this.state = S.String;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      this.numberText = String.fromCharCode(c);
      this.state = S.Number;
    } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
      this.literal = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
      this.literalAt = 1;
      this.state = S.Literal;
    } else {
      this.fail('expected a value');
    }
  }

  private endNumber(): void {
    if (!/^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(this.numberText)) return this.fail('bad number');
    this.state = S.AfterValue;
  }

  private close(open: number): void {
    if (this.stack.pop() !== open) return this.fail('mismatched bracket');
    this.state = S.AfterValue;
  }
}
