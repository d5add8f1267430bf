// `fleet bench <rig> --flash <image>`: the bench flashes every board of the rig first (here the RFC
// 2217 rig's boards, driven as physical ones), and the scenarios then run on the version that image
// carries, read from the boards.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { firmwareImage } from '../../firmware/sdk-host/firmware-image.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bench-flash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleet bench --flash', () => {
  it('flashes every board first and runs the scenario on the version it carries', { timeout: 300_000 }, async () => {
    // One image for every board: the role and the build are in the firmware, as on a chip, so the rig
    // is two production controllers (rfc2217-three-board's, without its client and its debug build).
    writeFileSync(join(dir, 'bench.bin'), await firmwareImage('2026.06.01'));
    const three = JSON.parse(readFileSync(join(root, 'harness', 'rigs', 'rfc2217-three-board.json'), 'utf8'));
    const rig = join(dir, 'rfc2217-two-controllers.json');
    const controllers = three.boards.filter((b: { role: string }) => b.role === 'controller').map((b: Record<string, unknown>) => ({ ...b, build: 'production' }));
    writeFileSync(rig, JSON.stringify({ ...three, name: 'rfc2217-two-controllers', boards: controllers }));
    const r = spawnSync(process.execPath, [join(root, 'bin', 'fleet.js'), 'bench', rig, '--flash', join(dir, 'bench.bin'), '--scenario', 'ota-revoked-version', '--report', join(dir, 'report')], { cwd: root, encoding: 'utf8', timeout: 280_000 });
    expect(r.stderr).toContain('bench: rig rfc2217-two-controllers (2 boards), 1 scenarios, report in');
    expect(r.stderr).toContain(', boards flashed with 2026.06.01');
    expect(r.stdout).toMatch(/^PASS  ota-revoked-version /m);
    expect(r.status).toBe(0);
    // The step names the version read from the board after the bench flashed it.
    expect(readFileSync(join(dir, 'report', 'index.html'), 'utf8')).toContain('power on the board and revoke its version 2026.06.01');
    // The reports say what the boards ran: the image the bench flashed, by its SHA-256.
    const sha = createHash('sha256').update(readFileSync(join(dir, 'bench.bin'))).digest('hex');
    const junit = readFileSync(join(dir, 'report', 'junit.xml'), 'utf8');
    for (const board of ['source', 'target']) {
      expect(junit).toContain(`<property name="board.${board}.firmware.version" value="2026.06.01"/>`);
      expect(junit).toContain(`<property name="board.${board}.firmware.sha256" value="${sha}"/>`);
      expect(junit).toContain(`<property name="board.${board}.firmware.source" value="flashed by the bench (--flash)"/>`);
    }
  });

  it("a board whose flashed firmware is not the rig's (a debug board, a client) fails the set-up, naming it, and the bench ends", { timeout: 300_000 }, () => {
    // rfc2217-three-board's source is a debug build and its third board a client: one production
    // controller image suits neither. The client still booting it is powered off, not waited for.
    const rig = join(root, 'harness', 'rigs', 'rfc2217-three-board.json');
    const r = spawnSync(process.execPath, [join(root, 'bin', 'fleet.js'), 'bench', rig, '--flash', join(dir, 'bench.bin'), '--scenario', 'ota-revoked-version', '--report', join(dir, 'mixed')], { cwd: root, encoding: 'utf8', timeout: 280_000 });
    expect(r.stdout).toMatch(/^FAIL  ota-revoked-version .* at "\(set-up\)": board source runs a production build; the rig says debug$/m);
    expect(r.status).toBe(1);
  });

  it('refuses inputs without an app image', () => {
    writeFileSync(join(dir, 'blob.bin'), new Uint8Array(4096));
    const r = spawnSync(process.execPath, [join(root, 'bin', 'fleet.js'), 'bench', '--flash', '0x9000', join(dir, 'blob.bin'), '--scenario', 'ota-revoked-version'], { cwd: root, encoding: 'utf8' });
    expect(r).toMatchObject({ status: 4, stderr: 'fleet: --flash: the inputs must hold exactly one app image (with an app descriptor), found 0\n' });
  });
});
