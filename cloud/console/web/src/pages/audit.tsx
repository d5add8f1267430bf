// The audit log: every change a super user made (through the console or the API) and what the cloud
// did by itself (a rollout paused on errors), newest first, with who, how and how it ended; filtered
// by who, what and when as `fleet audit` is, a page at a time.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { AuditEntry } from '../types.ts';
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { ErrorLine, Section, Table, when } from '../ui.tsx';

interface Filters {
  actor: string;
  action: string;
  /** Dates (YYYY-MM-DD) as the date inputs give them: since the day's start, until the next day's start, in UTC. */
  since: string;
  until: string;
}

const EMPTY: Filters = { actor: '', action: '', since: '', until: '' };
const PAGE = 100;

function dayAfter(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

function query(f: Filters, before: number | null): string {
  const q = new URLSearchParams({ limit: String(PAGE) });
  if (f.actor.trim()) q.set('actor', f.actor.trim());
  if (f.action.trim()) q.set('action', f.action.trim());
  if (f.since) q.set('since', `${f.since}T00:00:00Z`);
  if (f.until) q.set('until', dayAfter(f.until));
  if (before !== null) q.set('before', String(before));
  return q.toString();
}

export function Audit() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  // The pages read so far: each one's `before` (null: the newest), to go back as well as on.
  const [pages, setPages] = useState<(number | null)[]>([null]);
  const before = pages.at(-1) ?? null;
  const { data, error } = useLoad(() => api<{ entries: AuditEntry[]; next_before: number | null }>('GET', `/admin/audit?${query(filters, before)}`), [query(filters, before)]);
  const field = (name: keyof Filters, label: string, type: 'text' | 'date') => (
    <label>
      {label}
      {type === 'date' ? (
        <input name={name} type="date" value={draft[name]} onInput={(e) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value })} />
      ) : (
        <input name={name} type="text" value={draft[name]} onInput={(e) => setDraft({ ...draft, [name]: (e.target as HTMLInputElement).value })} />
      )}
    </label>
  );
  const entries = data?.entries ?? [];
  return (
    <Section title="Audit log">
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(draft);
          setPages([null]);
        }}
      >
        {field('actor', 'Who', 'text')}
        {field('action', 'Action (such as pauseRollout)', 'text')}
        {field('since', 'From (UTC)', 'date')}
        {field('until', 'To (UTC)', 'date')}
        <button type="submit">Apply</button>
        <button
          type="button"
          onClick={() => {
            setDraft(EMPTY);
            setFilters(EMPTY);
            setPages([null]);
          }}
        >
          Clear
        </button>
      </form>
      <ErrorLine error={error} />
      <p class="count">
        {data ? `${entries.length === 0 ? 'No entries' : `Entries ${(pages.length - 1) * PAGE + 1}–${(pages.length - 1) * PAGE + entries.length}`}${filters === EMPTY ? '' : ' matching the filters'}, newest first` : ''}
      </p>
      <Table columns={['When', 'Who', 'Via', 'Action', 'Status', 'Path']}>
        {entries.map((e) => (
          <tr key={e.id} data-action={e.action}>
            <td class="nowrap">{when(e.at)}</td>
            <td class="actor">{e.actor}</td>
            <td>{e.via}</td>
            <td>{e.action}</td>
            <td>{e.status}</td>
            <td class="mono path" title={`${e.method} ${e.path}`}>
              {e.method} {e.path}
            </td>
          </tr>
        ))}
      </Table>
      {pages.length > 1 ? (
        <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
          Newer
        </button>
      ) : null}{' '}
      {data?.next_before ? (
        <button type="button" onClick={() => setPages([...pages, data.next_before])}>
          Older
        </button>
      ) : null}
    </Section>
  );
}
