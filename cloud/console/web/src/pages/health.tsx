// The fleet's health (`#/health`, docs/device-health.md): GET /admin/health (devices reporting, crashed in
// the last days, low on heap, reports dropped, every release devices reported from), with the devices
// behind two of its counts from the inventory's own filters (GET /admin/devices?crashed_days=N,
// ?low_heap=BYTES). Devices link to their page, releases to theirs.
import { useState } from 'preact/hooks';
import { Field } from '../../../../../web-common/browser/fields.tsx';
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { CRASHED_DAYS_DEFAULT, LOW_HEAP_DEFAULT_BYTES } from '../../../../health-definitions.ts';
import { api } from '../api.ts';
import { breakdown, bytes, count, crashText, hours, nonZero, outcomesText, rate, share, summed } from '../health-text.ts';
import { deviceHref, releaseHref } from '../routes.ts';
import type { Device, FleetHealth } from '../types.ts';
import { ErrorLine, Section, Table, when } from '../ui.tsx';

/** Devices listed under each count, at most. */
const LISTED = 100;

interface Bounds {
  crashed_days: string;
  low_heap: string;
}

function DeviceLink({ d }: { d: Device }) {
  return (
    <>
      <a class="mono" href={deviceHref(d.uuid)}>
        {d.uuid}
      </a>
      {d.label ? <div class="label muted">{d.label}</div> : null}
    </>
  );
}

const devices = (query: string) => api<{ devices: Device[]; next_after: string | null }>('GET', `/admin/devices?${query}&limit=${LISTED}`);

export function FleetHealthPage() {
  const [draft, setDraft] = useState<Bounds>({ crashed_days: '', low_heap: '' });
  const [win, setWin] = useState<Bounds>(draft);
  const q = new URLSearchParams(Object.entries(win).filter(([, v]) => v.trim() !== '')).toString();
  const fleet = useLoad(() => api<FleetHealth>('GET', `/admin/health${q ? `?${q}` : ''}`), [q]);
  const f = fleet.data;
  // The inventory's lists, with the windows the summary used (its defaults when none was given).
  const crashed = useLoad(() => (f ? devices(`crashed_days=${f.crashed_days}`) : Promise.resolve(undefined)), [f?.crashed_days]);
  const lowHeap = useLoad(() => (f ? devices(`low_heap=${f.low_heap_bytes}`) : Promise.resolve(undefined)), [f?.low_heap_bytes]);
  const reboots = nonZero(summed((f?.releases ?? []).map((r) => r.reboots)));
  const crashes = summed((f?.releases ?? []).map((r) => r.crashes));
  return (
    <>
      <Section title="Fleet health">
        <form
          class="filters with-hints"
          onSubmit={(e) => {
            e.preventDefault();
            setWin(draft);
          }}
        >
          <Field label="Crashed in the last (days)" type="number" inputMode="numeric" value={draft.crashed_days} onValue={(v) => setDraft({ ...draft, crashed_days: v })} hint={`default ${CRASHED_DAYS_DEFAULT}`} />
          <Field label="Low heap below (bytes)" type="number" inputMode="numeric" value={draft.low_heap} onValue={(v) => setDraft({ ...draft, low_heap: v })} hint={`the largest free block; default ${LOW_HEAP_DEFAULT_BYTES}`} />
          <button type="submit">Apply</button>
        </form>
        <ErrorLine error={fleet.error} />
        {f ? (
          <dl class="summary" aria-label="fleet summary">
            <div>
              <dt>Devices reporting</dt>
              <dd>
                {count(f.reporting)} <span class="muted">of {count(f.devices)} enrolled</span>
              </dd>
            </div>
            <div class={f.crashed ? 'bad' : undefined}>
              <dt>Crashed in the last {f.crashed_days} days</dt>
              <dd>{count(f.crashed)}</dd>
            </div>
            <div class={f.low_heap ? 'bad' : undefined}>
              <dt>Low heap (block under {bytes(f.low_heap_bytes)})</dt>
              <dd>{count(f.low_heap)}</dd>
            </div>
            <div>
              <dt>Reports dropped by boards</dt>
              <dd>{count(f.dropped)}</dd>
            </div>
          </dl>
        ) : null}
      </Section>
      {f && f.reporting === 0 ? <p class="muted empty">No device has sent a health report yet (docs/device-health.md).</p> : null}
      {f && f.reporting > 0 ? (
        <>
          <div class="beside">
            <Section title="Unexpected reboots by reason">
              {reboots.length ? (
                <Table columns={['Reason', 'Reboots']}>
                  {reboots.map(([reason, n]) => (
                    <tr key={reason} data-reason={reason}>
                      <td>{reason}</td>
                      <td>{count(n)}</td>
                    </tr>
                  ))}
                </Table>
              ) : (
                <p class="muted">None on any release.</p>
              )}
              <p class="muted">Over every release in the table below (the daily aggregates kept); crashes by kind: {breakdown(crashes)}.</p>
            </Section>
            <Section title={`Crashed in the last ${f.crashed_days} days`}>
              <ErrorLine error={crashed.error} />
              {crashed.data?.devices.length ? (
                <Table columns={['Device', 'Last crash', 'On']}>
                  {crashed.data.devices.map((d) => (
                    <tr key={d.uuid} data-uuid={d.uuid}>
                      <td>
                        <DeviceLink d={d} />
                      </td>
                      <td>
                        {d.health?.last_crash ? (
                          <>
                            {crashText(d.health.last_crash)}
                            {d.health.last_crash.message !== null ? <code class="crash-message">{d.health.last_crash.message}</code> : null}
                          </>
                        ) : (
                          '—'
                        )}
                      </td>
                      <td class="mono">{d.health?.last_crash?.version ?? '—'}</td>
                    </tr>
                  ))}
                </Table>
              ) : crashed.data ? (
                <p class="muted">None.</p>
              ) : null}
              {crashed.data?.next_after ? <p class="muted">The first {LISTED} only.</p> : null}
            </Section>
            <Section title={`Low heap (largest free block under ${bytes(f.low_heap_bytes)})`}>
              <ErrorLine error={lowHeap.error} />
              {lowHeap.data?.devices.length ? (
                <Table columns={['Device', 'Largest free block', 'Lowest free heap', 'At']}>
                  {lowHeap.data.devices.map((d) => (
                    <tr key={d.uuid} data-uuid={d.uuid}>
                      <td>
                        <DeviceLink d={d} />
                      </td>
                      <td>{d.health?.heap ? bytes(d.health.heap.block) : '—'}</td>
                      <td>{d.health?.heap ? bytes(d.health.heap.heap_min) : '—'}</td>
                      <td>{when(d.health?.heap?.at)}</td>
                    </tr>
                  ))}
                </Table>
              ) : lowHeap.data ? (
                <p class="muted">None.</p>
              ) : null}
              {lowHeap.data?.next_after ? <p class="muted">The first {LISTED} only.</p> : null}
            </Section>
          </div>
          <Section title="Releases devices reported from">
            <Table columns={['Track', 'Version', 'Devices', 'Device-hours', 'Unexpected reboots', 'Per 1,000 device-hours', 'Crash-free', 'Updates to it']}>
              {f.releases.map((r) => (
                <tr key={`${r.class}/${r.product_hex}/${r.application}/${r.version}`} data-version={r.version}>
                  <td class="mono">
                    {r.class}/{r.product_hex}/{r.application}
                  </td>
                  <td class="mono">
                    <a href={releaseHref(r, r.version)}>{r.version}</a>
                  </td>
                  <td>{count(r.devices)}</td>
                  <td>{hours(r.device_hours)}</td>
                  <td class={r.unexpected_reboots ? 'bad' : undefined}>{count(r.unexpected_reboots)}</td>
                  <td>{rate(r.unexpected_per_1000h)}</td>
                  <td>{share(r.crash_free_share)}</td>
                  <td>{outcomesText(r.outcomes)}</td>
                </tr>
              ))}
            </Table>
          </Section>
        </>
      ) : null}
    </>
  );
}
