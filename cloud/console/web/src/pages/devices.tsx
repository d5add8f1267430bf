// Devices: the inventory (enrolment, last OTA check, last backup, groups), searchable and filtered as
// `fleet device list` is; a row opens what the cloud knows of that device, and links to its own page
// (pages/device.tsx: its health timeline and actions). Opened from a count of devices per version
// (components/device-versions.tsx), it starts filtered by that track and version.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { DeviceDetails } from '../components/device-details.tsx';
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
  /** 'true' or '': the API's behind and failed_update conditions. */
  behind: string;
  failed_update: string;
}

const EMPTY: Filters = { class: '', product_hex: '', application: '', search: '', version: '', group: '', not_seen_days: '', no_backup_days: '', behind: '', failed_update: '' };

function query(f: Filters): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v.trim() !== '') q.set(k, v.trim());
  q.set('limit', '500');
  return q.toString();
}

/** The columns a click sorts the page by, and what each sorts on. */
const SORTS = {
  UUID: (d: Device) => d.uuid,
  Track: (d: Device) => (d.last_check ? `${d.last_check.class} ${d.last_check.product_hex} ${d.last_check.application}` : ''),
  Version: (d: Device) => d.last_check?.version ?? '',
  'Last check': (d: Device) => d.last_check?.at ?? '',
  'Last backup': (d: Device) => d.backup?.last_backup_date ?? '',
} as const;
type SortColumn = keyof typeof SORTS;
const COLUMNS = ['UUID', 'Label', 'Track', 'Version', 'Last check', 'Last backup', 'Groups'] as const;

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
  const [sort, setSort] = useState<{ by: SortColumn; descending: boolean }>({ by: 'UUID', descending: false });
  const key = SORTS[sort.by];
  const sorted = [...devices].sort((a, b) => (sort.descending ? -1 : 1) * key(a).localeCompare(key(b)));
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
                  <button type="button" class="link sort" onClick={() => setSort({ by: c as SortColumn, descending: sort.by === c ? !sort.descending : false })}>
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
