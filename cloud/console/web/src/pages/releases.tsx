// Releases: every track, its versions with where the image lives, their staged rollouts and update
// outcomes; revoke, and steer a rollout (raise, pause, resume, end). Every action is an admin API call.
// A version opens its own page (pages/release.tsx): its rollout beside its health.
import { useState } from 'preact/hooks';
import { api, apiPath } from '../api.ts';
import { RolloutCell } from '../components/rollout.tsx';
import { releaseHref } from '../routes.ts';
import type { Release, Track } from '../types.ts';
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { Action, ErrorLine, Section, Table, when } from '../ui.tsx';

const trackKey = (t: Track) => `${t.class}/${t.product_hex}/${t.application}`;

function Versions({ track }: { track: Track }) {
  const { data, error, reload } = useLoad(() => api<{ versions: Release[] }>('GET', apiPath('admin', 'firmware', track.class, track.product_hex, track.application)), [trackKey(track)]);
  return (
    <Section title={`Track ${trackKey(track)}`}>
      <ErrorLine error={error} />
      <Table columns={['Version', 'Status', 'Released', 'Image', 'Rollout', 'Outcomes', '']}>
        {(data?.versions ?? []).map((v) => (
          <tr key={v.version} data-version={v.version}>
            <td class="mono">
              <a href={releaseHref(track, v.version)} title={`${v.version}: its rollout and health`}>
                {v.version}
              </a>
            </td>
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
