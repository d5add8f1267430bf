// The device-local API's error catalog (firmware/src/core/errors.ts) is the one source of its codes:
// docs/firmware-api.md's table lists the same codes with the same statuses, both ways, and every
// place in the firmware that answers an error names a code the catalog has, with one of its statuses.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { DEVICE_ERRORS } from '../../firmware/src/core/errors.ts';

const catalog: Record<string, number[]> = Object.fromEntries(Object.entries(DEVICE_ERRORS).map(([code, statuses]) => [code, [...statuses] as number[]]));

it('docs/firmware-api.md lists every code of the catalog with its statuses, and no other', () => {
  const doc = readFileSync('docs/firmware-api.md', 'utf8');
  const table = doc.slice(doc.indexOf('## Error codes'));
  const rows = [...table.matchAll(/^\| `([a-z_]+)` \| ([\d, ]+) \|/gm)].map((m) => [m[1]!, m[2]!.split(',').map((s) => Number(s.trim()))] as const);
  expect(rows.length).toBeGreaterThan(40);
  expect(Object.fromEntries(rows)).toEqual(catalog);
});

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

it('every error the firmware answers names a catalog code with one of its statuses', () => {
  const STATUS_OF = { badRequest: 400, unauthorized: 401, forbidden: 403, notFound: 404, conflict: 409, unavailable: 503 } as Record<string, number>;
  const seen: string[] = [];
  const wrong: string[] = [];
  for (const file of sources('firmware/src')) {
    const text = readFileSync(file, 'utf8');
    const check = (status: number, code: string) => {
      seen.push(code);
      if (!catalog[code]?.includes(status)) wrong.push(`${file}: ${status} ${code}`);
    };
    for (const m of text.matchAll(/new (?:DeviceError|HttpRefusal)\((\d{3}), '([a-z_]+)'/g)) check(Number(m[1]), m[2]!);
    for (const m of text.matchAll(/errors\.(\w+)\('([a-z_]+)'/g)) if (STATUS_OF[m[1]!]) check(STATUS_OF[m[1]!]!, m[2]!);
    for (const m of text.matchAll(/jsonResponse\((\d{3}), \{ error: '([a-z_]+)'/g)) check(Number(m[1]), m[2]!);
  }
  expect(wrong).toEqual([]);
  // The scan found the firmware's errors (not a pattern that matches nothing).
  expect(new Set(seen).size).toBeGreaterThan(35);
});
