// The streaming JSON check agrees with JSON.parse, whatever the chunking.
import { describe, expect, it } from 'vitest';
import { JsonValidator } from '../../firmware/src/core/json-validator.ts';

function valid(text: string, chunk: number): boolean {
  const v = new JsonValidator();
  const bytes = Buffer.from(text);
  try {
    for (let i = 0; i < bytes.length; i += chunk) v.update(bytes.subarray(i, i + chunk));
    v.finish();
    return true;
  } catch {
    return false;
  }
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const samples = [
  '{}', '[]', '0', '-0', '1.5e10', '-1.25E-3', '"a\\u00e9\\n"', 'true', 'false', 'null', ' {"a": [1, 2, {"b": null}], "c": "d"} ',
  '{"outputs":[{"id":1,"name":"Deck light"}],"mqtt":{"host":"broker.local","port":8883}}', '"é ü 漢字"',
  '', ' ', '{', '}', '[1,]', '{"a":1,}', '{"a" 1}', '{a:1}', '01', '1.', '.5', '-', '1e', '1e+', '+1', '"\\x"', '"\\u12G4"', '"a\nb"',
  'tru', 'nul', 'falsey', '{} {}', '[1 2]', '{"a":1 "b":2}', '"abc', '[[[]]', '{"a":[}]', '1 2', 'NaN', '"\\"', '[-]', '[1e5.0]', '0.0e-0',
];

describe('JsonValidator', () => {
  it.each(samples)('%j: same verdict as JSON.parse, in any chunking', (text) => {
    for (const chunk of [1, 2, 3, 7, 4096]) expect(valid(text, chunk)).toBe(parses(text));
  });

  it('accepts a 512 KB configuration export fed in 4 KB chunks', () => {
    const big = JSON.stringify({ outputs: Array.from({ length: 9000 }, (_, i) => ({ id: i, name: `Light ${i}`, level: i / 7, on: i % 2 === 0, tags: null })) });
    expect(big.length).toBeGreaterThan(500_000);
    expect(valid(big, 4096)).toBe(true);
    expect(valid(big.slice(0, -1), 4096)).toBe(false);
  });

  it('refuses nesting deeper than 64', () => {
    expect(valid('['.repeat(64) + ']'.repeat(64), 5)).toBe(true);
    expect(valid('['.repeat(65) + ']'.repeat(65), 5)).toBe(false);
  });
});
