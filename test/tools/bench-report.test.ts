// The bench's reports say what was tested, at their top: the rig file (path and SHA-256), each board
// with its firmware (version, build, app image SHA-256), the project's commit, the Node version and
// the engines and SDKs underneath; in index.html before the results, in junit.xml as the suite's
// properties (before its test cases).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runFleet, type FleetRun } from '../helpers/fleet-cli.ts';
import { TWO_BOARD_RIG } from '../helpers/fleet-virtual.ts';

let dir: string;
let bench: FleetRun;
let junit: string;
let html: string;
const property = (name: string) => new RegExp(`<property name="${name.replace(/[.()]/g, '\\$&')}" value="([^"]*)"/>`).exec(junit)?.[1];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bench-report-'));
  bench = await runFleet(['bench', TWO_BOARD_RIG, '--scenario', 'controller-out-of-range', '--report', join(dir, 'report')], { timeoutMs: 240_000 });
  junit = readFileSync(join(dir, 'report', 'junit.xml'), 'utf8');
  html = readFileSync(join(dir, 'report', 'index.html'), 'utf8');
}, 250_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the bench report names what was tested', () => {
  it('the run passed', () => {
    expect([bench.code, bench.stdout]).toEqual([0, expect.stringMatching(/^PASS  controller-out-of-range /m)]);
  });

  it('junit.xml: the rig file, the commit, Node and the SDKs, as properties before the test cases', () => {
    expect(junit.indexOf('<properties>')).toBeGreaterThan(0);
    expect(junit.indexOf('<properties>')).toBeLessThan(junit.indexOf('<testcase'));
    expect(property('rig.file')).toBe(TWO_BOARD_RIG);
    expect(property('rig.file.sha256')).toBe(createHash('sha256').update(readFileSync(TWO_BOARD_RIG)).digest('hex'));
    let head: string | undefined;
    try {
      head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      head = undefined; // a CI copy without git: the report says so rather than failing
    }
    if (head) expect(property('project.commit')).toMatch(new RegExp(`^${head}( \\+ local changes)?$`));
    else expect(property('project.commit')).toBe('unknown (not a git checkout, or git is missing)');
    expect(property('node')).toBe(`${process.version} (${process.platform} ${process.arch})`);
    expect(property("software.Moddable SDK (the firmware's build, also the virtual boards' for Linux)")).toMatch(/^8\.2\.3 \(commit [0-9a-f]{12}, (\$MODDABLE=\/\S+|\.\.\/shared\/moddable-sdk)\)$/);
    expect(property('software.esptool-js')).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('junit.xml: each board, with the version, build and image SHA-256 of its firmware', async () => {
    // The image a user builds for the rig's version and each board's build is the one it booted: the
    // source is a debug build, the target a production one (the build kind is in the firmware).
    const shaOf = async (build: string) => /sha256 ([0-9a-f]{64})/.exec((await runFleet(['image', 'build', '--version', '2026.01.01', '--build', build, '-o', join(dir, `fw-${build}.bin`)])).stdout)![1]!;
    const sha = await shaOf('debug');
    expect(property('board.source')).toBe('controller, virtual ESP32-S3, virtual, in-process, UUID 5c0e1a00-0000-4000-8000-000000000001');
    expect(property('board.source.firmware.version')).toBe('2026.01.01');
    expect(property('board.source.firmware.build')).toBe('debug');
    expect(property('board.source.firmware.sha256')).toBe(sha);
    expect(property('board.source.firmware.source')).toBe('factory image');
    expect(property('board.target.firmware.build')).toBe('production');
    expect(property('board.target.firmware.sha256')).toBe(await shaOf('production'));
  });

  it('index.html: the same, in a "What was tested" section before the results', () => {
    const at = html.indexOf('<h2>What was tested</h2>');
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(html.indexOf('<th>scenario</th>'));
    const section = html.slice(at, html.indexOf('</section>', at));
    for (const text of [TWO_BOARD_RIG, property('project.commit')!, process.version, '5c0e1a00-0000-4000-8000-000000000001', `image SHA-256 ${property('board.source.firmware.sha256')}`, '2026.01.01 (debug)', 'idf_ver moddable-sdk-lin', 'factory image']) {
      expect(section).toContain(text);
    }
  });
});
