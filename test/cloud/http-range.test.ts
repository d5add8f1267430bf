// Byte ranges (RFC 9110 section 14) as the hosted images serve them: one range, If-Range, 416.
import { describe, expect, it } from 'vitest';
import { decideRange, noneMatch } from '../../cloud/http-range.ts';

const ETAG = `"${'ab'.repeat(32)}"`;
const DATE = 'Sun, 01 Mar 2026 00:00:00 GMT';
const at = (range: string | undefined, ifRange?: string) => decideRange(range, ifRange, 1000, ETAG, DATE);

describe('decideRange', () => {
  it.each([
    ['bytes=0-99', { kind: 'partial', first: 0, last: 99 }],
    ['bytes=500-', { kind: 'partial', first: 500, last: 999 }],
    ['bytes=900-5000', { kind: 'partial', first: 900, last: 999 }],
    ['bytes=-10', { kind: 'partial', first: 990, last: 999 }],
    ['bytes=-5000', { kind: 'partial', first: 0, last: 999 }],
    ['BYTES = 1 - 2', { kind: 'partial', first: 1, last: 2 }],
    ['bytes=999-999', { kind: 'partial', first: 999, last: 999 }],
  ])('%s', (range, expected) => {
    expect(at(range)).toEqual(expected);
  });

  it.each(['bytes=1000-', 'bytes=1000-1001', 'bytes=-0'])('%s is outside: 416', (range) => {
    expect(at(range)).toEqual({ kind: 'unsatisfiable' });
  });

  it.each([undefined, 'items=0-1', 'bytes=', 'bytes=5-1', 'bytes=a-b', 'bytes=-', 'bytes=0-1,5-6', `bytes=${'9'.repeat(30)}-`])('%s: the whole image', (range) => {
    expect(at(range)).toEqual({ kind: 'full' });
  });

  it('If-Range: the strong ETag or the exact Last-Modified keeps the range; anything else sends the whole image', () => {
    expect(at('bytes=10-', ETAG)).toEqual({ kind: 'partial', first: 10, last: 999 });
    expect(at('bytes=10-', DATE)).toEqual({ kind: 'partial', first: 10, last: 999 });
    expect(at('bytes=10-', `W/${ETAG}`)).toEqual({ kind: 'full' });
    expect(at('bytes=10-', `"${'cd'.repeat(32)}"`)).toEqual({ kind: 'full' });
    expect(at('bytes=10-', 'Mon, 02 Mar 2026 00:00:00 GMT')).toEqual({ kind: 'full' });
    // A range outside the image with a stale If-Range: the whole (new) image, never a 416.
    expect(at('bytes=5000-', `"${'cd'.repeat(32)}"`)).toEqual({ kind: 'full' });
  });
});

describe('noneMatch', () => {
  it('matches the ETag, its weak form, * or a list holding it', () => {
    expect(noneMatch(ETAG, ETAG)).toBe(true);
    expect(noneMatch(`W/${ETAG}`, ETAG)).toBe(true);
    expect(noneMatch('*', ETAG)).toBe(true);
    expect(noneMatch(`"x", ${ETAG}`, ETAG)).toBe(true);
    expect(noneMatch('"x"', ETAG)).toBe(false);
    expect(noneMatch(undefined, ETAG)).toBe(false);
  });
});
