// npm run bench:rig: the bench's wall time on the RFC 2217 rig (virtual boards driven as physical
// ones: identity from the ROM and `status`, factory state checked, held in reset, every line through
// the RFC 2217 port) against the same boards driven directly. Both run the scenarios the RFC 2217
// rig can run, in one process, one after the other. One line per scenario and a total:
//   scenario <name> direct_ms=<n> rfc2217_ms=<n> ratio=<rfc2217 / direct>
//   bench direct_s=<s> rfc2217_s=<s> ratio=<…>
// Then the same scenarios on the RFC 2217 rig --repeat times more (2 by default; 0: none), each on
// fresh boards, a failure run again at once (harness/repeat.ts): a pass on the second try is a flake.
//   bench repeat runs=<n> scenarios=<k> flakes=<f> slowest_seconds=<s>
// Figures, not assertions. Options: --rig harness/rigs/rfc2217-three-board.json --scenario <name>… --repeat <n>
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadRig, type RigSpec } from '../../harness/rig.ts';
import { repeatLine, repeatScenarios } from '../../harness/repeat.ts';
import { applicable, runScenarios } from '../../harness/runner.ts';
import { scenarios } from '../../harness/scenarios/index.ts';
import { repeatCount } from '../commands/bench.ts';

const { values } = parseArgs({
  options: {
    rig: { type: 'string', default: fileURLToPath(new URL('../../harness/rigs/rfc2217-three-board.json', import.meta.url)) },
    scenario: { type: 'string', multiple: true },
    repeat: { type: 'string', default: '2' },
  },
});
const repeat = values.repeat === '0' ? 0 : repeatCount(values.repeat!);
const hosted = loadRig(resolve(values.rig!));
if (!hosted.boards.every((b) => b.kind === 'virtual' && b.drive === 'rfc2217')) throw new Error(`${values.rig}: every board must be a virtual board with "drive": "rfc2217"`);
const direct: RigSpec = { ...hosted, name: `${hosted.name}-direct`, boards: hosted.boards.map((b) => ({ ...b, drive: 'direct' as const })) };
const chosen = scenarios.filter((s) => applicable(hosted, s) === null && (!values.scenario || values.scenario.includes(s.name)));
const dir = mkdtempSync(join(tmpdir(), 'rig-bench-'));
try {
  process.stderr.write(`bench:rig: ${chosen.length} scenarios on ${hosted.boards.length} boards, direct then over RFC 2217\n`);
  const a = await runScenarios(direct, chosen, { reportDir: join(dir, 'direct') });
  const b = await runScenarios(hosted, chosen, { reportDir: join(dir, 'rfc2217') });
  const failed = [...a.results, ...b.results].filter((r) => r.status !== 'passed');
  for (const r of failed) process.stderr.write(`bench:rig: ${r.name} ${r.status}: ${r.error ?? r.reason}\n`);
  for (const [i, r] of a.results.entries()) {
    const other = b.results[i]!;
    process.stdout.write(`scenario ${r.name} direct_ms=${r.ms} rfc2217_ms=${other.ms} ratio=${(other.ms / r.ms).toFixed(2)}\n`);
  }
  process.stdout.write(`bench direct_s=${(a.ms / 1000).toFixed(1)} rfc2217_s=${(b.ms / 1000).toFixed(1)} ratio=${(b.ms / a.ms).toFixed(2)}\n`);
  let flakyOrFailed = false;
  if (repeat > 0) {
    const r = await repeatScenarios(hosted, chosen, { repeat, reportDir: join(dir, 'repeat'), progress: (line) => line.startsWith('repeat') && process.stderr.write(`bench:rig: ${line}\n`) });
    for (const t of r.tallies) for (const e of t.errors) process.stderr.write(`bench:rig: ${t.name} ${e}\n`);
    process.stdout.write(repeatLine(r) + '\n');
    flakyOrFailed = r.tallies.some((t) => t.flakes + t.failed > 0);
  }
  if (failed.length || flakyOrFailed) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
