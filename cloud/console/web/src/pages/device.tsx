// A device's page (`#/devices/<uuid>`): what the inventory knows of it, then its health from
// GET /admin/devices/{uuid}/health (docs/device-health.md): its state, its heartbeats as charts of heap
// and RSSI, its reports newest first (boots with reasons, crashes with their summary, update steps),
// paged by seq, and its daily aggregates. Its actions (components/device-actions.tsx): label, groups,
// remove; once removed, the page says so and shows nothing of it.
import { useState } from 'preact/hooks';
import { Check } from '../../../../../web-common/browser/fields.tsx';
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { api, apiPath } from '../api.ts';
import { DeviceActions } from '../components/device-actions.tsx';
import { DeviceDetails } from '../components/device-details.tsx';
import { HeartbeatCharts } from '../components/heartbeat-charts.tsx';
import { DaysTable, HealthState, TimelineTable } from '../components/health-timeline.tsx';
import { isHeartbeat } from '../health-text.ts';
import type { Device, Timeline } from '../types.ts';
import { ErrorLine, Section } from '../ui.tsx';

const DAYS = 30;

export function DevicePage({ uuid }: { uuid: string }) {
  // The page of reports shown: the newest (null), or those older than a seq.
  const [before, setBefore] = useState<number | null>(null);
  const [withHeartbeats, setWithHeartbeats] = useState(false);
  const [removed, setRemoved] = useState(false);
  const device = useLoad(() => api<Device>('GET', apiPath('admin', 'devices', uuid)), [uuid]);
  const timeline = useLoad(
    () => api<Timeline>('GET', `${apiPath('admin', 'devices', uuid, 'health')}?limit=200&days=${DAYS}${before === null ? '' : `&before=${before}`}`),
    [uuid, before],
  );
  const t = timeline.data;
  const beats = (t?.reports ?? []).filter(isHeartbeat);
  const listed = (t?.reports ?? []).filter((e) => withHeartbeats || e.report.kind !== 'heartbeat');
  if (removed) {
    return (
      <>
        <p class="crumbs">
          <a href="#/devices">Devices</a> › <span class="mono">{uuid}</span>
        </p>
        <p class="ok removed" role="status">
          Device <span class="mono">{uuid}</span> was removed; its stored backup is kept. <a href="#/devices">Back to the devices</a>
        </p>
      </>
    );
  }
  return (
    <>
      <p class="crumbs">
        <a href="#/devices">Devices</a> › <span class="mono">{uuid}</span>
      </p>
      <Section title={`Device ${uuid}`}>
        <ErrorLine error={device.error} />
        {device.data ? <DeviceDetails d={device.data} /> : null}
      </Section>
      {device.data ? (
        <Section title="Actions">
          <DeviceActions d={device.data} onChanged={device.reload} onRemoved={() => setRemoved(true)} />
        </Section>
      ) : null}
      <Section title="Health">
        <ErrorLine error={timeline.error} />
        {t ? <HealthState h={t.health} /> : null}
      </Section>
      {t && (t.reports.length > 0 || before !== null) ? (
        <>
          <Section title={`Heartbeats (${beats.length} in these reports)`}>
            <HeartbeatCharts beats={beats} />
          </Section>
          <Section title="Timeline">
            <div class="list-tools">
              <Check label="List heartbeats too" checked={withHeartbeats} onChange={setWithHeartbeats} />
              <span class="muted">
                {t.reports.length} report{t.reports.length === 1 ? '' : 's'}, newest first{before === null ? '' : `, older than seq ${before}`}
              </span>
            </div>
            {listed.length > 0 ? <TimelineTable entries={listed} /> : <p class="muted empty">Only heartbeats in these reports.</p>}
            <p class="inline">
              {before !== null ? (
                <button type="button" onClick={() => setBefore(null)}>
                  Newest
                </button>
              ) : null}
              {t.next_before !== null ? (
                <button type="button" onClick={() => setBefore(t.next_before)}>
                  Older reports
                </button>
              ) : null}
            </p>
          </Section>
          <Section title={`Days (the last ${DAYS}, by the day the cloud received the reports)`}>
            <DaysTable days={t.days} />
          </Section>
        </>
      ) : null}
    </>
  );
}
