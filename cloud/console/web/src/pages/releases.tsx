// Releases: every track, its versions with where the image lives, their staged rollouts and update
// outcomes; revoke, and steer a rollout (raise, pause, resume, end). Every action is an admin API call.
// A version opens its own page (pages/release.tsx): its rollout beside its health. Below, how many
// devices run each version (components/device-versions.tsx), each opening the devices that do.
import { useState } from 'preact/hooks';
import { api, apiPath } from '../api.ts';
import { DeviceVersionsTable } from '../components/device-versions.tsx';
import { RolloutCell } from '../components/rollout.tsx';
import { releaseHref } from '../routes.ts';
import type { Release, Track, TrackSigning } from '../types.ts';
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { Action, ErrorLine, Section, Table, when } from '../ui.tsx';

const trackKey = (t: Track) => `${t.class}/${t.product_hex}/${t.application}`;

/** The track's signing requirement (docs/secure-boot.md): whether unsigned images are refused, and by which keys. */
function SigningLine({ track }: { track: Track }) {
  const { data } = useLoad(() => api<TrackSigning>('GET', apiPath('admin', 'tracks', track.class, track.product_hex, track.application, 'signing')), [trackKey(track)]);
  if (!data) return null;
  // A key is known by its digest; its label, when the track's setting gives one, is the name people use.
  const keys = data.keys.map((k) => (k.label ? `${k.label} (${k.digest.slice(0, 12)}…)` : `${k.digest.slice(0, 12)}…`)).join(', ');
  return (
    <p class="signing">
      Signing: {data.required ? <strong>required</strong> : 'not required (unsigned images accepted)'}
      {data.keys.length ? `; trusted key${data.keys.length === 1 ? '' : 's'}: ${keys}` : ''}
    </p>
  );
}

function Versions({ track }: { track: Track }) {
  const { data, error, reload } = useLoad(() => api<{ versions: Release[] }>('GET', apiPath('admin', 'firmware', track.class, track.product_hex, track.application)), [trackKey(track)]);
  return (
    <Section title={`Track ${trackKey(track)}`}>
      <SigningLine track={track} />
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
              <a href={releaseHref(track, v.version)} title="the devices behind each number, on the release's page">
                {v.outcomes.succeeded} succeeded, <span class={v.outcomes.failed > 0 ? 'bad' : undefined}>{v.outcomes.failed} failed</span>, {v.outcomes.pending} pending
              </a>
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
      {track ? (
        <Section title={`Devices by version on ${trackKey(track)}`}>
          <DeviceVersionsTable key={trackKey(track)} track={track} />
        </Section>
      ) : null}
    </>
  );
}
