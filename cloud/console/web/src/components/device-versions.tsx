// How many devices run each version of a track (GET /admin/device-versions, as `fleet device versions`
// prints it): from each device's last OTA check, newest version first, each version's share of the
// track's devices as a bar and a figure, and its status. A version opens the devices page filtered by
// the track and that version.
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { api } from '../api.ts';
import { devicesHref, type TrackId } from '../routes.ts';
import type { DeviceVersions } from '../types.ts';
import { ErrorLine, Table } from '../ui.tsx';

export function DeviceVersionsTable({ track }: { track: TrackId }) {
  const query = new URLSearchParams({ class: track.class, product_hex: track.product_hex, application: track.application });
  const { data, error } = useLoad(() => api<DeviceVersions>('GET', `/admin/device-versions?${query}`), [query.toString()]);
  if (error) return <ErrorLine error={error} />;
  if (!data) return null;
  const counts = data.tracks[0];
  if (!counts) return <p class="muted empty">No device has checked for updates on this track yet.</p>;
  return (
    <div class="device-versions">
      <p class="muted">
        {counts.devices} device{counts.devices === 1 ? '' : 's'} on this track, by the version each reported at its last check:
      </p>
      <Table columns={['Version', 'Devices', 'Share', 'Status']}>
        {counts.versions.map((v) => {
          const share = Math.round((100 * v.devices) / counts.devices);
          return (
            <tr key={v.version} data-devices-version={v.version}>
              <td class="mono">
                <a href={devicesHref({ ...track, version: v.version })} title={`the devices that run ${v.version}`}>
                  {v.version}
                </a>
              </td>
              <td class="num">{v.devices.toLocaleString('en-US')}</td>
              <td class="share">
                <span class="share-bar" role="img" aria-label={`${share} % of the track's devices`}>
                  <span style={{ width: `${share}%` }} />
                </span>{' '}
                {share} %
              </td>
              <td class={v.status === 'REVOKED' ? 'bad' : v.status === null ? 'muted' : undefined}>{v.status ?? 'not released'}</td>
            </tr>
          );
        })}
      </Table>
    </div>
  );
}
