// Devices: the inventory (enrolment, last OTA check, last backup, groups, and each device's health: last
// report, last crash, largest free block, RSSI), searchable and filtered as `fleet device list` is; a row
// opens what the cloud knows of that device, and links to its own page (pages/device.tsx: its health
// timeline and actions). Opened from a count of devices per version
// (components/device-versions.tsx), it starts filtered by that track and version.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { CRASHED_DAYS_DEFAULT, LOW_HEAP_DEFAULT_BYTES } from '../../../../health-definitions.ts';
import { api } from '../api.ts';
import { DeviceDetails } from '../components/device-details.tsx';
import { bytes, crashText, dbm } from '../health-text.ts';
import { deviceHref, type DeviceFilter } from '../routes.ts';
import type { Device } from '../types.ts';
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { ErrorLine, Section, when } from '../ui.tsx';

interface Filters {
  /** The track, when the page was opened for one (no field of its own: shown with a button that drops it). */
  class: string;
  product_hex: string;
  application: string;
  search: string;
  version: string;
  group: string;
  not_seen_days: string;
  no_backup_days: string;
  /** docs/device-health.md: an unexpected reboot in the last N days; the last heartbeat's largest free block under N bytes. */
  crashed_days: string;
  low_heap: string;
  /** 'true' or '': the API's behind and failed_update conditions. */
  behind: string;
  failed_update: string;
}

const EMPTY: Filters = { class: '', product_hex: '', application: '', search: '', version: '', group: '', not_seen_days: '', no_backup_days: '', crashed_days: '', low_heap: '', behind: '', failed_update: '' };

function query(f: Filters): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v.trim() !== '') q.set(k, v.trim());
  q.set('limit', '500');
  return q.toString();
}

/** What a column sorts on: text, a number, or null for a device without that figure. */
type SortKey = string | number | null;

/** The columns a click sorts the page by, and what each sorts on. */
const SORTS: Record<string, (d: Device) => SortKey> = {
  UUID: (d) => d.uuid,
  Track: (d) => (d.last_check ? `${d.last_check.class} ${d.last_check.product_hex} ${d.last_check.application}` : ''),
  Version: (d) => d.last_check?.version ?? '',
  'Last check': (d) => d.last_check?.at ?? '',
  'Last report': (d) => d.health?.last_report_at ?? null,
  'Last crash': (d) => d.health?.last_crash?.at ?? null,
  'Largest free block': (d) => d.health?.heap?.block ?? null,
  RSSI: (d) => d.health?.rssi ?? null,
  'Last backup': (d) => d.backup?.last_backup_date ?? '',
};
const COLUMNS = ['UUID', 'Label', 'Track', 'Version', 'Last check', 'Last report', 'Last crash', 'Largest free block', 'RSSI', 'Last backup', 'Groups'] as const;

/** Ascending or descending, a device without the figure (null) last either way: the sick ones lead. */
function compare(a: SortKey, b: SortKey, descending: boolean): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  const order = typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
  return descending ? -order : order;
}

const DAY_MS = 86_400_000;
/** A crash is drawn in red while it is within the fleet summary's window (CRASHED_DAYS_DEFAULT days). */
const recent = (iso: string) => Date.now() - Date.parse(iso) < CRASHED_DAYS_DEFAULT * DAY_MS;

/** The device's health cells: last report, last crash (when and its kind or boot reason), largest free block (red under
 * the low-heap default, as the fleet summary counts it), RSSI. The crash's message is on the device's page. */
function HealthCells({ h }: { h: Device['health'] }) {
  if (!h) {
    return (
      <>
        <td class="muted">never</td>
        <td>—</td>
        <td>—</td>
        <td>—</td>
      </>
    );
  }
  const crash = h.last_crash;
  return (
    <>
      <td>{when(h.last_report_at)}</td>
      <td class={crash && recent(crash.at) ? 'bad' : undefined}>{crash ? crashText(crash) : 'none'}</td>
      <td class={h.heap && h.heap.block < LOW_HEAP_DEFAULT_BYTES ? 'nowrap bad' : 'nowrap'}>{h.heap ? bytes(h.heap.block) : '—'}</td>
      <td class="nowrap">{dbm(h.rssi)}</td>
    </>
  );
}

export function Devices({ initial = {} }: { initial?: DeviceFilter }) {
  const [draft, setDraft] = useState<Filters>({ ...EMPTY, ...initial });
  const [filters, setFilters] = useState<Filters>({ ...EMPTY, ...initial });
  const onTrack = [filters.class, filters.product_hex, filters.application].filter(Boolean).join('/');
  const [open, setOpen] = useState<string | null>(null);
  const { data, error } = useLoad(() => api<{ devices: Device[]; next_after: string | null }>('GET', `/admin/devices?${query(filters)}`), [query(filters)]);
  const field = (name: keyof Filters, label: string, type: 'text' | 'number' = 'text') => (
    <label>
      {label}
      {type === 'number' ? (
        <input name={name} type="number" min={0} value={draft[name]} onInput={(e) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value })} />
      ) : (
        <input name={name} type="text" value={draft[name]} onInput={(e) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value })} />
      )}
    </label>
  );
  const devices = data?.devices ?? [];
  const [sort, setSort] = useState<{ by: string; descending: boolean }>({ by: 'UUID', descending: false });
  const key = SORTS[sort.by]!;
  const sorted = [...devices].sort((a, b) => compare(key(a), key(b), sort.descending));
  return (
    <Section title="Devices">
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
        }}
      >
        {field('search', 'Search (UUID or label)')}
        {field('version', 'Version')}
        {field('group', 'Group')}
        {field('not_seen_days', 'Not seen for (days)', 'number')}
        {field('no_backup_days', 'No backup for (days)', 'number')}
        {field('crashed_days', 'Crashed in the last (days)', 'number')}
        {field('low_heap', 'Low heap below (bytes)', 'number')}
        <label class="check">
          <input name="behind" type="checkbox" checked={draft.behind === 'true'} onChange={(e) => setDraft({ ...draft, behind: (e.target as HTMLInputElement).checked ? 'true' : '' })} />
          Behind the newest release
        </label>
        <label class="check">
          <input name="failed_update" type="checkbox" checked={draft.failed_update === 'true'} onChange={(e) => setDraft({ ...draft, failed_update: (e.target as HTMLInputElement).checked ? 'true' : '' })} />
          Failed its last update
        </label>
        <button type="submit">Apply</button>
      </form>
      {onTrack ? (
        <p class="on-track">
          On track <span class="mono">{onTrack}</span>{' '}
          <button
            type="button"
            onClick={() => {
              const any = { ...draft, class: '', product_hex: '', application: '' };
              setDraft(any);
              setFilters({ ...filters, class: '', product_hex: '', application: '' });
            }}
          >
            Any track
          </button>
        </p>
      ) : null}
      <ErrorLine error={error} />
      <p class="muted">
        {devices.length} device{devices.length === 1 ? '' : 's'}
        {data?.next_after ? ' (more: narrow the filters)' : ''}
      </p>
      <table>
        <thead>
          <tr>
            {COLUMNS.map((c) =>
              c in SORTS ? (
                <th key={c} aria-sort={sort.by === c ? (sort.descending ? 'descending' : 'ascending') : undefined}>
                  <button type="button" class="link sort" onClick={() => setSort({ by: c, descending: sort.by === c ? !sort.descending : false })}>
                    {c}
                    {sort.by === c ? (sort.descending ? ' ▼' : ' ▲') : ''}
                  </button>
                </th>
              ) : (
                <th key={c}>{c}</th>
              ),
            )}
          </tr>
        </thead>
        <tbody>
        {sorted.map((d) => (
          <Fragment key={d.uuid}>
            <tr data-uuid={d.uuid} class="clickable" onClick={() => setOpen(open === d.uuid ? null : d.uuid)}>
              <td class="mono">
                <button type="button" class="link" aria-expanded={open === d.uuid}>
                  {d.uuid}
                </button>
              </td>
              <td class="label">{d.label ?? ''}</td>
              <td class="mono">{d.last_check ? `${d.last_check.class} ${d.last_check.product_hex} ${d.last_check.application}` : '—'}</td>
              <td class="mono">{d.last_check?.version ?? '—'}</td>
              <td>{when(d.last_check?.at)}</td>
              <HealthCells h={d.health} />
              <td>{when(d.backup?.last_backup_date)}</td>
              <td>{d.groups.join(', ')}</td>
            </tr>
            {open === d.uuid ? (
              <tr>
                <td colSpan={COLUMNS.length}>
                  <DeviceDetails d={d} />
                  <p>
                    <a href={deviceHref(d.uuid)}>Health timeline of {d.uuid}</a>
                  </p>
                </td>
              </tr>
            ) : null}
          </Fragment>
        ))}
        </tbody>
      </table>
    </Section>
  );
}
