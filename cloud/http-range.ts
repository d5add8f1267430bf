// Byte ranges of a GET (RFC 9110 section 14): the one kind the hosted images serve, so that a board
// whose download was cut resumes it (docs/firmware-images.md). Pure functions, tested on their own.

export type RangeDecision =
  /** Send the whole representation (no Range, one the server ignores, or If-Range not matching). */
  | { kind: 'full' }
  /** 206 with bytes first..last (inclusive). */
  | { kind: 'partial'; first: number; last: number }
  /** 416: no byte of the range is in the representation. */
  | { kind: 'unsatisfiable' };

/**
 * What to send for `Range` (and `If-Range`) against a representation of `size` bytes whose strong
 * ETag is `etag` (quoted) and Last-Modified is `lastModified` (an HTTP date).
 *
 * - One range only: several ranges (a multipart/byteranges answer) are answered with the whole
 *   representation, which RFC 9110 14.2 allows ("a server MAY ignore the Range header field").
 * - A Range that is not `bytes=` with valid positions is ignored (14.2: a server MUST ignore a range
 *   unit it does not understand; an invalid ranges-specifier may be ignored).
 * - If-Range (13.1.5): a strong ETag must equal ours; a date must equal Last-Modified exactly; a weak
 *   ETag never matches. No match: the whole representation, never a 416.
 */
export function decideRange(range: string | undefined, ifRange: string | undefined, size: number, etag: string, lastModified: string): RangeDecision {
  if (range === undefined) return { kind: 'full' };
  if (ifRange !== undefined) {
    const v = ifRange.trim();
    const matches = v.startsWith('"') ? v === etag : !v.startsWith('W/') && v === lastModified;
    if (!matches) return { kind: 'full' };
  }
  const m = /^\s*bytes\s*=\s*(.+)$/i.exec(range);
  if (!m) return { kind: 'full' };
  const specs = m[1]!.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (specs.length !== 1) return { kind: 'full' };
  const spec = /^(\d*)\s*-\s*(\d*)$/.exec(specs[0]!);
  if (!spec || (spec[1] === '' && spec[2] === '')) return { kind: 'full' };
  const [first, last] = [spec[1]!, spec[2]!];
  if (first === '') {
    // A suffix: the last N bytes. -0 selects nothing.
    const n = Number(last);
    if (!Number.isSafeInteger(n)) return { kind: 'full' };
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', first: Math.max(0, size - n), last: size - 1 };
  }
  const a = Number(first);
  const b = last === '' ? Number.MAX_SAFE_INTEGER : Number(last);
  if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b) || b < a) return { kind: 'full' };
  if (a >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', first: a, last: Math.min(b, size - 1) };
}

/** `If-None-Match` holds this strong ETag (or `*`): the answer is 304. */
export function noneMatch(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v === etag || v === `W/${etag}`;
  });
}
