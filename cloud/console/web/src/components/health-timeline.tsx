// A device's health as its page shows it (docs/device-health.md): what the inventory keeps (last boot,
// last crash, heap, RSSI, reports dropped), its reports newest first (boots with their reasons, crashes
// with their summary, update steps, and heartbeats when asked for), and its daily aggregates. A crash's
// message and module come from the device: they are text nodes, never markup.
import { isUnexpected } from '../../../../health-definitions.ts';
import { breakdown, bytes, count, crashText, dbm, heartbeatText, hours, reportTime } from '../health-text.ts';
import type { DeviceHealthState, HealthDay, TimelineEntry } from '../types.ts';
import { Table, when } from '../ui.tsx';

export function HealthState({ h }: { h: DeviceHealthState | null }) {
  if (!h) return <p class="muted empty">No health report from this device yet: a board sends one after every boot and a heartbeat every hour by default.</p>;
  return (
    <dl class="details" aria-label="health state">
      <dt>Last report</dt>
      <dd>{when(h.last_report_at)}</dd>
      <dt>Last boot</dt>
      <dd>{h.last_boot ? `${when(h.last_boot.at)}: ${h.last_boot.reason} on ${h.last_boot.version}` : '—'}</dd>
      <dt>Last crash</dt>
      <dd class={h.last_crash ? 'bad' : undefined}>
        {h.last_crash ? (
          <>
            {crashText(h.last_crash)} on {h.last_crash.version}
            {h.last_crash.message !== null ? <code class="crash-message">{h.last_crash.message}</code> : null}
          </>
        ) : (
          'none kept'
        )}
      </dd>
      <dt>Heap</dt>
      <dd>{h.heap ? `largest free block ${bytes(h.heap.block)}, lowest free heap ${bytes(h.heap.heap_min)} (${when(h.heap.at)})` : '—'}</dd>
      <dt>RSSI</dt>
      <dd>{dbm(h.rssi)}</dd>
      <dt>Reports dropped</dt>
      <dd>{h.dropped ?? '—'}</dd>
    </dl>
  );
}

/** What one report says, in the timeline's last cell. */
function What({ r }: { r: TimelineEntry['report'] }) {
  switch (r.kind) {
    case 'boot':
      return (
        <>
          <span class={isUnexpected(r.reason) ? 'bad' : undefined}>{r.reason}</span>
          {r.by ? ` by ${r.by}` : ''}
          {r.crash ? (
            <div class="crash">
              <strong>{r.crash.kind}</strong>
              {r.crash.message ? <code class="crash-message">{r.crash.message}</code> : null}
              {r.crash.where ? <span class="where">at {r.crash.where}</span> : null}
            </div>
          ) : null}
          {r.rolled_back ? (
            <div class="bad">
              rolled back from {r.rolled_back.version} ({r.rolled_back.slot})
            </div>
          ) : null}
          <div class="muted">
            {r.slot} {r.ota}, boot {count(r.boots)}, secure_version {r.sv}
          </div>
        </>
      );
    case 'update':
      return (
        <>
          update to <span class="mono">{r.version}</span>: <span class={r.outcome === 'failed' ? 'bad' : r.outcome === 'succeeded' ? 'good' : undefined}>{r.outcome}</span>
          {r.reason ? ` (${r.reason})` : ''}
          {r.detail ? <div class="detail">{r.detail}</div> : null}
        </>
      );
    case 'heartbeat':
      return <span class="muted">{heartbeatText(r)}</span>;
  }
}

export function TimelineTable({ entries }: { entries: TimelineEntry[] }) {
  return (
    <Table columns={['When', 'Seq', 'Report', 'Firmware', 'What']}>
      {entries.map((e) => (
        <tr key={e.report.seq} data-seq={e.report.seq} data-kind={e.report.kind}>
          <td>
            {when(reportTime(e))}
            {e.report.at === null ? <div class="muted">(received; no clock yet)</div> : null}
          </td>
          <td>{e.report.seq}</td>
          <td>{e.report.kind}</td>
          <td class="mono">{e.report.fw}</td>
          <td class="what">
            <What r={e.report} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

export function DaysTable({ days }: { days: HealthDay[] }) {
  if (days.length === 0) return <p class="muted empty">No daily aggregate in these days.</p>;
  return (
    <Table columns={['Day (UTC)', 'Version', 'Boots', 'Unexpected reboots', 'Crashes', 'Heartbeats', 'Device-hours', 'Min block', 'Min heap', 'Min RSSI']}>
      {days.map((d) => (
        <tr key={`${d.day}/${d.version}`} data-day={d.day}>
          <td>{d.day}</td>
          <td class="mono">{d.version}</td>
          <td>{count(d.boots)}</td>
          <td class={d.unexpected_reboots ? 'bad' : undefined}>{d.unexpected_reboots ? `${d.unexpected_reboots}: ${breakdown(d.reboots)}` : '0'}</td>
          <td>{breakdown(d.crashes)}</td>
          <td>{count(d.heartbeats)}</td>
          <td>{hours(d.device_hours)}</td>
          <td>{d.block_min === null ? '—' : bytes(d.block_min)}</td>
          <td>{d.heap_min === null ? '—' : bytes(d.heap_min)}</td>
          <td>{dbm(d.rssi_min)}</td>
        </tr>
      ))}
    </Table>
  );
}
