// How far a release has gone (docs/staged-rollouts.md): its update outcomes as one bar (succeeded,
// failed, pending of the devices offered it), and the devices behind each number, one click away,
// each linked to its own page.
import { useState } from 'preact/hooks';
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { api } from '../api.ts';
import { deviceHref } from '../routes.ts';
import type { OutcomeDevices, Release } from '../types.ts';
import { ErrorLine, when } from '../ui.tsx';

const KINDS = [
  { outcome: 'succeeded', label: 'succeeded' },
  { outcome: 'failed', label: 'failed' },
  { outcome: 'pending', label: 'pending' },
] as const;
type Outcome = (typeof KINDS)[number]['outcome'];

export function RolloutProgress({ release, rolloutPath }: { release: Release; rolloutPath: string }) {
  const [open, setOpen] = useState<Outcome | null>(null);
  const o = release.outcomes;
  const offered = o.succeeded + o.failed + o.pending;
  const share = (n: number) => (offered === 0 ? 0 : (100 * n) / offered);
  return (
    <div class="progress">
      <p>
        Offered to {offered} device{offered === 1 ? '' : 's'}
        {release.rollout ? `, reaching ${release.rollout.effective_percent} % of the track${release.rollout.groups.length ? ` and groups ${release.rollout.groups.join(', ')}` : ''}` : ''}
      </p>
      <div class="bar" role="img" aria-label={`${o.succeeded} succeeded, ${o.failed} failed, ${o.pending} pending of ${offered} offered`}>
        {KINDS.map((k) => (o[k.outcome] > 0 ? <span key={k.outcome} class={`segment ${k.outcome}`} style={{ width: `${share(o[k.outcome])}%` }} /> : null))}
      </div>
      <p class="counts">
        {KINDS.map((k) => (
          <button key={k.outcome} type="button" class={`link count ${k.outcome}`} aria-expanded={open === k.outcome} disabled={o[k.outcome] === 0} onClick={() => setOpen(open === k.outcome ? null : k.outcome)}>
            {o[k.outcome]} {k.label}
          </button>
        ))}
      </p>
      {open ? <OutcomeList key={open} rolloutPath={rolloutPath} outcome={open} /> : null}
    </div>
  );
}

function OutcomeList({ rolloutPath, outcome }: { rolloutPath: string; outcome: Outcome }) {
  const { data, error } = useLoad(() => api<OutcomeDevices>('GET', `${rolloutPath}/devices?outcome=${outcome}&limit=500`), [rolloutPath, outcome]);
  return (
    <>
      <ErrorLine error={error} />
      {data ? (
        <table class="outcome-devices" aria-label={`devices ${outcome}`}>
          <thead>
            <tr>
              <th>Device</th>
              <th>From</th>
              <th>Offered</th>
              <th>Settled</th>
              <th>Attempts</th>
            </tr>
          </thead>
          <tbody>
            {data.devices.map((d) => (
              <tr key={d.uuid} data-uuid={d.uuid}>
                <td class="mono">
                  <a href={deviceHref(d.uuid)}>{d.uuid}</a>
                </td>
                <td class="mono">{d.from_version}</td>
                <td>{when(d.offered_at)}</td>
                <td>{when(d.settled_at)}</td>
                <td>{d.attempts}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {data?.next_after ? <p class="muted">The first 500; `fleet rollout devices … --outcome {outcome}` lists them all.</p> : null}
    </>
  );
}
