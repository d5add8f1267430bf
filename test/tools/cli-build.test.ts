// The compiled `fleet` command (bin/cli-build.js, docs/cli-start.md): built once, used while every
// source it was built from keeps its content, built again as soon as one changes; sources still find
// the files beside them; and the real command answers --version from its build.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCli, cacheDir, freshEntry } from '../../bin/cli-build.js';
import { FLEET_JS, ROOT } from '../helpers/fleet-cli.ts';

/** A project of three files laid out as the real one: tools/fleet.ts, a module it imports, a data file beside it. */
function miniProject(): string {
  const root = mkdtempSync(join(tmpdir(), 'cli-build-'));
  mkdirSync(join(root, 'tools'));
  writeFileSync(join(root, 'tools', 'greeting.ts'), "export const greeting: string = 'hello';\n");
  writeFileSync(join(root, 'tools', 'data.txt'), 'beside the source');
  writeFileSync(
    join(root, 'tools', 'fleet.ts'),
    [
      "import { readFileSync } from 'node:fs';",
      "import { greeting } from './greeting.ts';",
      'export async function main(): Promise<string> {',
      "  const { late } = await import('./late.ts');",
      "  return `${greeting} ${late} ${readFileSync(new URL('./data.txt', import.meta.url), 'utf8')}`;",
      '}',
      '',
    ].join('\n'),
  );
  writeFileSync(join(root, 'tools', 'late.ts'), "export const late = 'loaded later';\n");
  return root;
}

async function run(entry: string): Promise<string> {
  const { main } = (await import(`${pathToFileURL(entry).href}?t=${Date.now()}`)) as { main: () => Promise<string> };
  return main();
}

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe('the compiled command', () => {
  it('is built once, used while its sources keep their content, and built again when one changes', async () => {
    const root = miniProject();
    made.push(root);
    expect(freshEntry(root)).toBeUndefined();
    const first = await buildCli(root);
    expect(first.startsWith(cacheDir(root))).toBe(true);
    expect(freshEntry(root)).toBe(first);
    // The dynamic import is a chunk loaded when called; the data file is read beside its source.
    expect(await run(first)).toBe('hello loaded later beside the source');

    // Touched, content unchanged: still fresh (the digest decides, not the time).
    const greeting = join(root, 'tools', 'greeting.ts');
    const later = new Date(Date.now() + 5_000);
    utimesSync(greeting, later, later);
    expect(freshEntry(root)).toBe(first);

    // Same size, new content: stale, whatever the time says after.
    writeFileSync(greeting, "export const greeting: string = 'HELLO';\n");
    expect(freshEntry(root)).toBeUndefined();
    const second = await buildCli(root);
    expect(second).not.toBe(first);
    expect(await run(second)).toBe('HELLO loaded later beside the source');

    // A module loaded only later (a chunk) is a source too.
    writeFileSync(join(root, 'tools', 'late.ts'), "export const late = 'changed';\n");
    expect(freshEntry(root)).toBeUndefined();
    expect(await run(await buildCli(root))).toBe('HELLO changed beside the source');

    // A source removed: stale.
    rmSync(join(root, 'tools', 'data.txt'));
    rmSync(join(root, 'tools', 'late.ts'));
    expect(freshEntry(root)).toBeUndefined();
  });

  it('is kept apart for each checkout (worktrees sharing node_modules do not run each other’s sources)', () => {
    expect(cacheDir('/a/checkout')).not.toBe(cacheDir('/another/checkout'));
    // Inside the node_modules the build's imports resolve from, whatever .cache/ links to.
    expect(cacheDir(ROOT).startsWith(join(ROOT, 'node_modules', '.cache', 'fleet-cli'))).toBe(true);
  });

  it('loads nothing heavy to start: the packages a command needs load inside that command', async () => {
    // The static import graph of tools/fleet.ts, as esbuild resolves it (dynamic imports not followed).
    const esbuild = await import('esbuild');
    const { metafile } = await esbuild.build({ entryPoints: [join(ROOT, 'tools', 'fleet.ts')], absWorkingDir: ROOT, bundle: true, platform: 'node', format: 'esm', packages: 'external', write: false, metafile: true, outdir: join(tmpdir(), 'cli-graph'), splitting: true, logLevel: 'silent' });
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const i of metafile.inputs[file]?.imports ?? []) {
        if (i.kind !== 'import-statement') continue;
        if (i.external) packages.add(i.path);
        else visit(i.path);
      }
    };
    visit('tools/fleet.ts');
    const heavy = ['express', '@sinclair/typebox', 'ajv', 'jose', 'serialport', '@grpc/grpc-js', 'pg', 'better-sqlite3', 'mqtt', 'aedes', 'esptool-js', 'pino', 'preact', 'tsx'];
    expect([...packages].filter((p) => heavy.some((h) => p === h || p.startsWith(`${h}/`)))).toEqual([]);
    expect(packages.has('commander')).toBe(true);
  });

  it('answers --version with the package version, from its build', () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    expect(execFileSync(process.execPath, [FLEET_JS, '--version'], { cwd: ROOT, encoding: 'utf8' })).toBe(`${version}\n`);
    expect(execFileSync(process.execPath, [FLEET_JS, '-V'], { cwd: ROOT, encoding: 'utf8' })).toBe(`${version}\n`);
    // The run above used (or made) a build that matches the sources as they are.
    expect(freshEntry(ROOT)).toMatch(/fleet\.js$/);
  });
});
