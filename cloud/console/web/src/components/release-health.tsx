// A release's health (GET …/{version}/health, docs/device-health.md) beside the previous release's, and
// its rollout's health gate (docs/staged-rollouts.md): the margin, the device-hours it waits for, whether
// it is judging, over the margin, and why the rollout paused itself.
import { breakdown, count, hours, outcomesText, rate, share } from '../health-text.ts';
import type { ReleaseFigures, ReleaseHealth } from '../types.ts';
import { Table } from '../ui.tsx';

const ROWS: [string, (f: ReleaseFigures) => string][] = [
  ['Devices', (f) => count(f.devices)],
  ['Device-hours', (f) => hours(f.device_hours)],
  ['Unexpected reboots per 1,000 device-hours', (f) => rate(f.unexpected_per_1000h)],
  ['Unexpected reboots', (f) => `${count(f.unexpected_reboots)}${f.unexpected_reboots ? `: ${breakdown(f.reboots)}` : ''}`],
  ['Crash-free share', (f) => share(f.crash_free_share)],
  ['Crashes by kind', (f) => breakdown(f.crashes)],
  ['Boots, heartbeats', (f) => `${count(f.boots)}, ${count(f.heartbeats)}`],
  ['Updates to it', (f) => outcomesText(f.outcomes)],
];

export function ReleaseHealthTable({ h }: { h: ReleaseHealth }) {
  const p = h.previous;
  return (
    <Table columns={['', h.version, p ? `${p.version} (previous)` : 'previous release']}>
      {ROWS.map(([label, of]) => (
        <tr key={label} data-figure={label}>
          <th scope="row">{label}</th>
          <td class="this">{of(h)}</td>
          <td class="previous">{p ? of(p) : '—'}</td>
        </tr>
      ))}
    </Table>
  );
}

export function HealthGate({ gate, rate: own, previous }: { gate: ReleaseHealth['gate']; rate: number | null; previous: ReleaseHealth['previous'] }) {
  if (!gate) return <p class="muted">No staged rollout: no health gate.</p>;
  if (gate.health_margin === null) return <p class="gate">Health gate off (rollout {gate.state}): `fleet rollout set --health-margin N`.</p>;
  const verdict = !gate.judging
    ? `not judged before ${count(gate.health_min_device_hours)} device-hours on the release`
    : gate.over
      ? 'over the margin'
      : 'within the margin';
  // The gate counts a previous release without device-hours (or none) as 0 (cloud/ota/rollout.ts).
  const limit = (previous?.unexpected_per_1000h ?? 0) + gate.health_margin;
  return (
    <dl class="details gate" aria-label="health gate">
      <dt>Margin</dt>
      <dd>
        {gate.health_margin} unexpected reboots per 1,000 device-hours over the previous release
        {` (pauses above ${rate(limit)}; now ${rate(own)})`}
      </dd>
      <dt>Judges after</dt>
      <dd>{count(gate.health_min_device_hours)} device-hours</dd>
      <dt>Verdict</dt>
      <dd class={gate.over ? 'bad' : undefined}>{verdict}</dd>
      <dt>Rollout</dt>
      <dd>
        <strong class={`state ${gate.state}`}>{gate.state}</strong>
        {gate.paused_reason ? <p class="reason">{gate.paused_reason}</p> : null}
      </dd>
    </dl>
  );
}
