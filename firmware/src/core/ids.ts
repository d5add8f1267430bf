// Identifiers the device handles: UUIDs and MAC addresses.

/**
 * A record UUID names a file on flash (`/records/<kind>/<uuid>`), so the grammar is strict
 * (docs/storage.md, "Record names"): 1 to 64 characters of A-Z a-z 0-9 "-" "_", the first a letter
 * or a digit. No "." (so never "." or "..", and never a temporary or sidecar name, which all carry
 * a dot), no ":" (not a file-name character on every flash file system), no "/" or "%". RFC 4122
 * UUIDs and names such as `lamp-0` or `ctl-xs-0001` fit.
 */
export const UUID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$';
export const UUID_RULE = '1 to 64 of A-Z a-z 0-9 - _, starting with a letter or a digit';

// The pattern is a string and its RegExp is made at each call: a RegExp object made at module level
// is preloaded, and XS 8.2.3 corrupts memory when it runs one (docs/moddable-regexp.md).
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && new RegExp(UUID_PATTERN).test(value);
}

/** "aa-bb-cc-dd-ee-ff" or "AA:BB:…" → "AA:BB:CC:DD:EE:FF"; null when it is not a MAC. */
export function normalizeMac(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const m = /^([0-9A-Fa-f]{2})[:-]([0-9A-Fa-f]{2})[:-]([0-9A-Fa-f]{2})[:-]([0-9A-Fa-f]{2})[:-]([0-9A-Fa-f]{2})[:-]([0-9A-Fa-f]{2})$/.exec(value.trim());
  return m ? m.slice(1).join(':').toUpperCase() : null;
}
