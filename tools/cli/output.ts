// What the cloud's commands print and parse alike (`fleet device …`, `fleet rollout …`, `fleet audit`,
// the health commands): whole-number options, JSON for scripts, fixed-width tables, times to the minute.
import { InvalidArgumentError } from 'commander';

export function wholeNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`must be a whole number: ${value}`);
  return n;
}

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
