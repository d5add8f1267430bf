// Reset sequences are data (esptool's D/R/W notation); a bad one is an error naming the step, never
// a silent no-op. The named methods are esptool's sequences.
import { describe, expect, it } from 'vitest';
import { formatResetSequence, parseResetMethod, parseResetSequence, ResetSequenceError, SEQUENCES } from '../../harness/transport/reset-sequence.ts';

describe('reset sequences', () => {
  it("parses esptool's classic sequence step by step", () => {
    expect(parseResetSequence('D0|R1|W100|D1|R0|W50|D0')).toEqual([
      { line: 'dtr', asserted: false },
      { line: 'rts', asserted: true },
      { waitMs: 100 },
      { line: 'dtr', asserted: true },
      { line: 'rts', asserted: false },
      { waitMs: 50 },
      { line: 'dtr', asserted: false },
    ]);
    expect(parseResetSequence('')).toEqual([]);
  });

  it('formats what it parses back to the same text, for every named method', () => {
    for (const s of Object.values(SEQUENCES)) for (const text of Object.values(s)) expect(formatResetSequence(parseResetSequence(text))).toBe(text);
  });

  it.each([
    ['D2', 'step 1 "D2" is not D0, D1, R0, R1 or W<milliseconds>'],
    ['D0|X1', 'step 2 "X1" is not D0, D1, R0, R1 or W<milliseconds>'],
    ['D0||R1', 'step 2 "" is not'],
    ['W', 'step 1 "W" is not'],
    ['W-5', 'step 1 "W-5" is not'],
    ['W0', 'step 1 waits 0 ms'],
    ['d0', 'step 1 "d0" is not'],
    ['D0|R1|', 'step 3 "" is not'],
  ])('refuses %j', (text, message) => {
    expect(() => parseResetSequence(text)).toThrow(ResetSequenceError);
    expect(() => parseResetSequence(text)).toThrow(message);
  });

  it('knows the methods by name and refuses others', () => {
    expect(parseResetMethod('usb-jtag')).toBe('usb-jtag');
    expect(() => parseResetMethod('jtag')).toThrow('reset method must be one of classic, usb-jtag, none: "jtag"');
  });
});
