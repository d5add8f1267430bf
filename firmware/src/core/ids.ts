// Identifiers the device handles: UUIDs and MAC addresses.

export const UUID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}

/** "aa-bb-cc-dd-ee-ff" or "AA:BB:…" → "AA:BB:CC:DD:EE:FF"; null when it is not a MAC. */
export function normalizeMac(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const m = /^([0-9A-Fa-f]{2})[:-]([0-9A-Fa-f]{2})[:-]([0-9A-Fa-f]{2})[:-]([0-9A-Fa-f]{2})[:-]([0-9A-Fa-f]{2})[:-]([0-9A-Fa-f]{2})$/.exec(value.trim());
  return m ? m.slice(1).join(':').toUpperCase() : null;
}
