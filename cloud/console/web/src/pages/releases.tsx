// Releases: every track, its versions with where the image lives, their staged rollouts and update
// outcomes; revoke, and steer a rollout (raise, pause, resume, end). Every action is an admin API call.
import { useState } from 'preact/hooks';
import { api, apiPath } from '../api.ts';
import type { Release, Rollout, Track } from '../types.ts';
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { Action, ErrorLine, Section, Table, when } from '../ui.tsx';

const trackKey = (t: Track) => `${t.class}/${t.product_hex}/${t.application}`;

function RolloutCell({ track, release, reload }: { track: Track; release: Release; reload: () => void }) {
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
        {r.step_percent ? <> (+{r.step_percent} % every {r.step_every_seconds} s)</> : null}
      </p>
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

function Versions({ track }: { track: Track }) {
  const { data, error, reload } = useLoad(() => api<{ versions: Release[] }>('GET', apiPath('admin', 'firmware', track.class, track.product_hex, track.application)), [trackKey(track)]);
  return (
    <Section title={`Track ${trackKey(track)}`}>
      <ErrorLine error={error} />
      <Table columns={['Version', 'Status', 'Released', 'Image', 'Rollout', 'Outcomes', '']}>
        {(data?.versions ?? []).map((v) => (
          <tr key={v.version} data-version={v.version}>
            <td class="mono">{v.version}</td>
            <td>{v.status}</td>
            <td>{when(v.released_at)}</td>
            <td>
              {v.hosted ? 'hosted' : v.url ? 'elsewhere' : 'none'}
              {v.size !== undefined ? <span class="muted"> {v.size.toLocaleString('en-US')} B</span> : null}
              {v.signed_by ? (
                <div class="muted mono" title={`signature block ${v.signed_by.block}, key ${v.signed_by.key_digest}`}>
                  signed {v.signed_by.key_digest.slice(0, 12)}…{v.signed_by.key_label ? ` ${v.signed_by.key_label}` : ''}
                </div>
              ) : null}
            </td>
            <td>
              <RolloutCell track={track} release={v} reload={reload} />
            </td>
            <td class="outcomes">
              <span title="succeeded">✓ {v.outcomes.succeeded}</span> <span title="failed">✗ {v.outcomes.failed}</span> <span title="pending">… {v.outcomes.pending}</span>
            </td>
            <td>
              {v.status === 'RELEASED' ? (
                <Action label="Revoke" confirm={`Revoke ${v.version}?`} run={() => api('POST', apiPath('admin', 'firmware', track.class, track.product_hex, track.application, v.version, 'revoke')).then(reload)} />
              ) : null}
            </td>
          </tr>
        ))}
      </Table>
    </Section>
  );
}

export function Releases() {
  const { data, error } = useLoad(() => api<{ tracks: Track[] }>('GET', '/admin/firmware'), []);
  const [selected, setSelected] = useState<string | null>(null);
  const tracks = data?.tracks ?? [];
  const track = tracks.find((t) => trackKey(t) === selected) ?? tracks[0];
  return (
    <>
      <Section title="Tracks">
        <ErrorLine error={error} />
        {tracks.length === 0 && data ? <p class="muted">No release yet: `fleet firmware release …`.</p> : null}
        <ul class="tracks">
          {tracks.map((t) => (
            <li key={trackKey(t)}>
              <button type="button" class={track && trackKey(t) === trackKey(track) ? 'current' : ''} onClick={() => setSelected(trackKey(t))}>
                {trackKey(t)}
              </button>{' '}
              <span class="muted">
                {t.released} released, {t.revoked} revoked, latest {t.latest ?? '—'}
              </span>
            </li>
          ))}
        </ul>
      </Section>
      {track ? <Versions track={track} /> : null}
    </>
  );
}
