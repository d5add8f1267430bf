// The audit log: every change a super user made (through the console or the API) and what the cloud
// did by itself (a rollout paused on errors), newest first, with who, how and how it ended.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { AuditEntry } from '../types.ts';
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { ErrorLine, Section, Table, when } from '../ui.tsx';

export function Audit() {
  const [before, setBefore] = useState<number | null>(null);
  const { data, error } = useLoad(() => api<{ entries: AuditEntry[]; next_before: number | null }>('GET', `/admin/audit?limit=100${before ? `&before=${before}` : ''}`), [before]);
  return (
    <Section title="Audit log">
      <ErrorLine error={error} />
      <Table columns={['When', 'Who', 'Via', 'Action', 'Status', 'Path']}>
        {(data?.entries ?? []).map((e) => (
          <tr key={e.id} data-action={e.action}>
            <td>{when(e.at)}</td>
            <td class="actor">{e.actor}</td>
            <td>{e.via}</td>
            <td>{e.action}</td>
            <td>{e.status}</td>
            <td class="mono path">
              {e.method} {e.path}
            </td>
          </tr>
        ))}
      </Table>
      {before !== null ? (
        <button type="button" onClick={() => setBefore(null)}>
          Newest
        </button>
      ) : null}{' '}
      {data?.next_before ? (
        <button type="button" onClick={() => setBefore(data.next_before)}>
          Older
        </button>
      ) : null}
    </Section>
  );
}
