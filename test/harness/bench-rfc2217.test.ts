// The whole bench on a rig whose virtual boards are reached only through their RFC 2217 ports and
// the addresses their consoles announce, driven by the code that drives boards on USB or ser2net
// (harness/serial-board.ts): identity read from each board (eFuse MAC from the ROM, UUID from
// `status`), resets and "power" through DTR/RTS. Three boards (source, target, one client) keep the
// run short; every scenario of the suite runs, and the two this rig cannot do say why.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRig } from '../../harness/rig.ts';
import { runScenarios } from '../../harness/runner.ts';
import { scenarios } from '../../harness/scenarios/index.ts';

const rigPath = fileURLToPath(new URL('../../harness/rigs/rfc2217-three-board.json', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'bench-rfc2217-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the bench on the RFC 2217 rig', () => {
  it('passes every scenario it can run, and reports the others not applicable with the reason', { timeout: 400_000 }, async () => {
    const rig = loadRig(rigPath);
    const run = await runScenarios(rig, scenarios, { reportDir: dir });
    const notApplicable = Object.fromEntries(run.results.filter((r) => r.status === 'not_applicable').map((r) => [r.name, r.reason]));
    expect(notApplicable).toEqual({
      'controller-out-of-range': 'needs boards the harness can move out of radio range; source, target, client-1 are driven as physical boards (on a real rig the operator moves them, by hand)',
      'cloud-backup-replacement-board': "needs a replacement board that takes another board's UUID; source, target, client-1 keep the identity read from them (on a real rig, swap the board by hand)",
    });
    const others = run.results.filter((r) => r.status !== 'not_applicable').map((r) => `${r.name} ${r.status}${r.error ? ` at "${r.failedStep}": ${r.error}` : ''}`);
    expect(others).toEqual(scenarios.filter((s) => !(s.name in notApplicable)).map((s) => `${s.name} passed`));
  });
});
