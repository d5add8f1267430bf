// Appconfig: each cloud function's staged and deployed log level (spec 2.7, 3.4); stage a level,
// deploy the staged one. The API's own refusals (a deployment in progress: 409) are shown as they come.
import { useState } from 'preact/hooks';
import { api, apiPath } from '../api.ts';
import type { FunctionConfig } from '../types.ts';
import { useLoad } from '../../../../../web-common/browser/hooks.ts';
import { Action, ErrorLine, Section, Table, when } from '../ui.tsx';

const LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'];

function Row({ f, reload }: { f: FunctionConfig; reload: () => void }) {
  const [level, setLevel] = useState(f.staged?.configuration.logging ?? f.effective_level);
  const stagedNewer = f.staged !== null && (f.deployed === null || f.staged.version > f.deployed.version);
  return (
    <tr data-function={f.function_name}>
      <td class="mono">{f.function_name}</td>
      <td>{f.effective_level}</td>
      <td>{f.staged ? `v${f.staged.version} ${f.staged.configuration.logging ?? ''}` : '—'}</td>
      <td>{f.deployed ? `v${f.deployed.version} ${f.deployed.configuration.logging ?? ''} at ${when(f.deployed.deployed_at)}` : '—'}</td>
      <td>{f.deployment ? `${f.deployment.state === 'IN_PROGRESS' ? 'baking until' : 'done'} ${when(f.deployment.ends_at)}` : '—'}</td>
      <td>
        <select aria-label={`log level of ${f.function_name}`} value={level} onChange={(e) => setLevel((e.target as HTMLSelectElement).value)}>
          {LEVELS.map((l) => (
            <option value={l} key={l}>
              {l}
            </option>
          ))}
        </select>{' '}
        <Action label="Stage" run={() => api('PATCH', apiPath('appconfig', f.function_name), { body: { logging: level } }).then(reload)} />{' '}
        <Action label="Deploy" disabled={!stagedNewer} run={() => api('POST', apiPath('appconfig', f.function_name, 'deploy'), { success: 202 }).then(reload)} />
      </td>
    </tr>
  );
}

export function AppConfig() {
  const { data, error, reload } = useLoad(() => api<{ functions: FunctionConfig[] }>('GET', '/appconfig'), []);
  return (
    <Section title="Cloud functions: log levels">
      <ErrorLine error={error} />
      <Table columns={['Function', 'Effective', 'Staged', 'Deployed', 'Deployment', 'Change']}>
        {(data?.functions ?? []).map((f) => (
          <Row key={`${f.function_name}/${f.staged?.version ?? 0}/${f.deployed?.version ?? 0}`} f={f} reload={reload} />
        ))}
      </Table>
    </Section>
  );
}
