// `fleet bench --repeat N` as a user runs it: one line per scenario (passes, flakes, failures, the
// slowest run), the totals line, a report per run; a bad count is a usage error.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bench-repeat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fleet = (...args: string[]) => spawnSync(process.execPath, [join(root, 'bin', 'fleet.js'), 'bench', join(root, 'harness', 'rigs', 'two-board.json'), ...args], { cwd: root, encoding: 'utf8', timeout: 120_000 });

describe('fleet bench --repeat', () => {
  it('runs the scenario twice on fresh boards and tallies it', { timeout: 150_000 }, () => {
    const r = fleet('--repeat', '2', '--scenario', 'ota-revoked-version', '--report', join(dir, 'report'));
    expect(r.stdout).toMatch(/^ota-revoked-version +passed 2\/2 +flakes 0 +failed 0 +slowest \d+\.\d s\nbench repeat runs=2 scenarios=1 flakes=0 slowest_seconds=\d+\.\d\n/);
    expect(r.stderr).toContain('repeat 2/2\n');
    for (const run of ['run-1', 'run-2']) expect(existsSync(join(dir, 'report', run, 'index.html'))).toBe(true);
    expect(r.status).toBe(0);
  });

  it.each(['0', '101', 'x2', '1.5'])('refuses --repeat %s with exit 2', (n) => {
    const r = fleet('--repeat', n, '--scenario', 'ota-revoked-version');
    expect(r.stderr).toContain(`error: option '--repeat <n>' argument '${n}' is invalid. must be a whole number from 1 to 100: ${n}`);
    expect(r.status).toBe(2);
  });
});
