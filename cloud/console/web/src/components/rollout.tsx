// A release's staged rollout (docs/staged-rollouts.md): its state, percentage, groups, schedule and why
// it paused; set the percentage, pause, resume, end it. Every action is an admin API call; `reload`
// then reads what the cloud made of it. Used by the releases table and a release's own page.
import { useState } from 'preact/hooks';
import { api, apiPath } from '../api.ts';
import type { Release, Rollout, Track } from '../types.ts';
import { Action, when } from '../ui.tsx';
import { scheduleText } from '../../../../ota/schedule-text.ts';

export function RolloutCell({ track, release, reload }: { track: Pick<Track, 'class' | 'product_hex' | 'application'>; release: Release; reload: () => void }) {
  const r: Rollout | null = release.rollout;
  const [percent, setPercent] = useState('');
  const base = apiPath('admin', 'firmware', track.class, track.product_hex, track.application, release.version, 'rollout');
  const act = (f: () => Promise<unknown>) => async () => {
    await f();
    reload();
  };
  if (!r) return <span class="muted">everyone</span>;
  return (
    <div class="rollout">
      <p>
        <strong class={`state ${r.state}`}>{r.state}</strong> at {r.effective_percent} %
        {r.groups.length > 0 ? <> + groups {r.groups.join(', ')}</> : null}
        {scheduleText(r) ? <> ({scheduleText(r)})</> : null}
      </p>
      {r.next_step ? (
        <p class="next-step">
          Next step: {r.next_step.percent} % at {when(r.next_step.at)}
        </p>
      ) : null}
      {r.paused_reason ? <p class="reason">{r.paused_reason}</p> : null}
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
        }}
      >
        <label>
          Percent <input type="number" min={0} max={100} value={percent} onInput={(e) => setPercent((e.target as HTMLInputElement).value)} aria-label={`rollout percentage of ${release.version}`} />
        </label>
        <Action label="Set" disabled={percent === ''} run={act(() => api('PUT', base, { body: { percent: Number(percent) }, success: [200, 201] }).then(() => setPercent('')))} />
        {r.state === 'active' ? <Action label="Pause" run={act(() => api('POST', `${base}/pause`))} /> : <Action label="Resume" run={act(() => api('POST', `${base}/resume`))} />}
        <Action label="End rollout" confirm="Release to every device?" run={act(() => api('DELETE', base, { success: 204 }))} />
      </form>
    </div>
  );
}
