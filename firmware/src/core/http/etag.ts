// Entity tags as the device API writes and compares them (DESIGN.md section 3: a backup's ETag is the
// lowercase SHA-256 hex of its bytes; RFC 9110 section 8.8.3): quoted on the wire, compared without
// the quotes and the weak prefix (the weak comparison RFC 9110 section 13.1.2 asks of If-None-Match).
// The one place the quotes come and go, for the board and for the programs that read its answers.

/** The ETag header's value for an entity tag. */
export function quoteEtag(etag: string): string {
  return `"${etag}"`;
}

/** An ETag header's entity tag: no weak prefix, no quotes, lowercase; null when there is none. */
export function unquoteEtag(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return value.trim().replace(/^W\//, '').replace(/^"|"$/g, '').toLowerCase();
}

/** Whether If-None-Match names `etag` (or is `*`): then a GET answers 304. */
export function ifNoneMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((v) => unquoteEtag(v) === etag);
}
