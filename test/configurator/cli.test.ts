// `fleet configurator` as an installer runs it: it prints its URL (loopback, the port asked for or
// a free one), serves the page there, stops on Ctrl-C; a file that is not a site exits 4 with a
// sentence; --site is required (exit 2).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fleetJs = join(root, 'bin', 'fleet.js');
const dir = mkdtempSync(join(tmpdir(), 'configurator-cli-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleet configurator', () => {
  it('prints its loopback URL, creates the site file, serves the page, and stops on SIGINT', { timeout: 60_000 }, async () => {
    const site = join(dir, 'site.db');
    const child = spawn(process.execPath, [fleetJs, 'configurator', '--site', site, '--port', '0'], { cwd: root });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    const deadline = Date.now() + 30_000;
    while (!/\n/.test(out) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    expect(out).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\n$/);
    expect(err).toBe(`configurator: site ${site}; Ctrl-C stops it\n`);
    expect(existsSync(site)).toBe(true);
    const page = await fetch(out.trim());
    expect([page.status, (await page.text()).includes('<script type="module" src="/app.js">')]).toEqual([200, true]);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('exits 4 naming the file when it is not a site, and 2 without --site', () => {
    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'shopping list: cable ties, wago connectors, a spare ESP32-S3 board');
    const bad = spawnSync(process.execPath, [fleetJs, 'configurator', '--site', notes], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect([bad.status, bad.stderr]).toEqual([4, `fleet: ${notes} cannot be used as a site: file is not a database\n`]);
    const none = spawnSync(process.execPath, [fleetJs, 'configurator'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(none.status).toBe(2);
    expect(none.stderr).toContain("required option '--site <file>' not specified");
  });
});
