// A release's page (`#/releases/<class>/<product_hex>/<application>/<version>`): its staged rollout,
// steered as on the releases page, beside its health (docs/device-health.md): devices, device-hours,
// unexpected reboots per 1,000 device-hours against the previous release, crash-free share, update
// outcomes by reason, and the rollout's health gate.
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { api, apiPath } from '../api.ts';
import { HealthGate, ReleaseHealthTable } from '../components/release-health.tsx';
import { RolloutCell } from '../components/rollout.tsx';
import { RolloutProgress } from '../components/rollout-progress.tsx';
import type { TrackId } from '../routes.ts';
import type { Release, ReleaseHealth } from '../types.ts';
import { ErrorLine, Section, when } from '../ui.tsx';

export function ReleasePage({ track, version }: { track: TrackId; version: string }) {
  const trackPath = apiPath('admin', 'firmware', track.class, track.product_hex, track.application);
  // There is no GET of one version: the track's list holds it with its rollout and outcomes.
  const release = useLoad(() => api<{ versions: Release[] }>('GET', trackPath), [trackPath]);
  const health = useLoad(() => api<ReleaseHealth>('GET', `${trackPath}${apiPath(version, 'health')}`), [trackPath, version]);
  const reload = () => {
    release.reload();
    health.reload();
  };
  const r = release.data?.versions.find((v) => v.version === version);
  const name = `${track.class}/${track.product_hex}/${track.application}`;
  return (
    <>
      <p class="crumbs">
        <a href="#/releases">Releases</a> › <span class="mono">{name}</span> › <span class="mono">{version}</span>
      </p>
      <h2 class="page-title">
        Release <span class="mono">{version}</span> <span class="muted">of {name}</span>
      </h2>
      <ErrorLine error={release.error} />
      {release.data && !r ? <p class="error">No version {version} on this track.</p> : null}
      <div class="beside">
        <Section title="Rollout">
          {r ? (
            <>
              <p>
                {r.status}, released {when(r.released_at)}
              </p>
              {r.rollout ? <RolloutCell track={track} release={r} reload={reload} /> : <p class="muted">No staged rollout: offered to every device on the track.</p>}
              <h3>Outcomes seen by update checks</h3>
              <RolloutProgress release={r} rolloutPath={`${trackPath}${apiPath(version, 'rollout')}`} />
            </>
          ) : null}
        </Section>
        <Section title="Health">
          <ErrorLine error={health.error} />
          {health.data && health.data.devices === 0 ? <p class="muted empty">No device has reported from {version} yet.</p> : null}
          {health.data ? <ReleaseHealthTable h={health.data} /> : null}
          <h3>Health gate</h3>
          {health.data ? <HealthGate gate={health.data.gate} rate={health.data.unexpected_per_1000h} previous={health.data.previous} /> : null}
        </Section>
      </div>
    </>
  );
}
