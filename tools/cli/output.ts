// What the cloud's commands print alike (`fleet device …`, `fleet rollout …`, `fleet audit`, the
// health commands): JSON for scripts, fixed-width tables, times to the minute.

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** Fixed-width columns; the last one is not padded. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** An ISO time as `YYYY-MM-DD HH:MM`; `-` for none. */
export const minute = (iso: string | undefined | null) => (iso ? iso.slice(0, 16).replace('T', ' ') : '-');
