// The controllers page: one row per controller of the site with its reachability, firmware, the
// ETag of HEAD /backup against the SHA-256 of the site's export, and the Deployment Required
// indicator (spec 2.3); Deploy, Refresh and Pull; and the form that adds a controller.
import { useEffect, useState } from 'preact/hooks';
import { api, type Controller, type ControllerState } from '../api.ts';
import { DangerAction } from '../components/confirm.tsx';
import { LoginForm } from '../components/login.tsx';
import { ActionForm, Button, Field } from '../../../../web-common/browser/fields.tsx';
import { useAction } from '../../../../web-common/browser/hooks.ts';
import { Message, shortEtag } from '../components/ui.tsx';

function Indicator({ s }: { s: ControllerState | null }) {
  if (!s) return <span class="badge muted">Reading…</span>;
  if (!s.reachable) return <span class="badge down">Not answering</span>;
  if (!s.logged_in) return <span class="badge muted">Log in to compare</span>;
  if (s.backup === 'unknown') return <span class="badge muted">Not compared</span>;
  if (s.deployment_required) return <span class="badge warn">Deployment Required</span>;
  return <span class="badge ok">In sync</span>;
}

function backupText(s: ControllerState): string {
  switch (s.backup) {
    case 'no_backup':
      return 'No backup on the device';
    case 'in_sync':
      return 'The controller holds this site\'s configuration';
    case 'deployment_required':
      return 'The controller holds another configuration';
    default:
      return '';
  }
}

export function ControllerRow({ controller }: { controller: Controller }) {
  const [state, setState] = useState<ControllerState | null>(null);
  const action = useAction();
  const refresh = () => action.run(async () => void setState(await api.state({ id: controller.id })));
  useEffect(() => {
    void refresh();
  }, [controller.id, controller.address]);
  const s = state;
  const missing = s?.records?.missing_on_controller ?? [];
  const extra = s?.records?.only_on_controller ?? [];
  return (
    <article class="controller" aria-labelledby={`ctl-${controller.id}`} data-testid={`controller-${controller.id}`}>
      <header>
        <h3 id={`ctl-${controller.id}`}>
          <a href={`#/controllers/${controller.id}/configuration`}>{controller.name}</a>
        </h3>
        <Indicator s={s} />
      </header>
      <dl class="facts">
        <dt>Address</dt>
        <dd>{controller.address}</dd>
        <dt>Hardware</dt>
        <dd>{controller.hardware_class}</dd>
        <dt>Firmware</dt>
        <dd>{s?.firmware_version ?? '—'}</dd>
        <dt>Site ETag</dt>
        <dd>
          <code title={s?.site_etag}>{shortEtag(s?.site_etag ?? null)}</code>
        </dd>
        <dt>Controller ETag</dt>
        <dd>
          <code title={s?.device_etag ?? ''}>{s?.backup === 'no_backup' ? 'none' : shortEtag(s?.device_etag ?? null)}</code>
        </dd>
      </dl>
      {s && s.backup !== 'unknown' && <p class="detail" data-testid="backup-state">{backupText(s)}</p>}
      {missing.length > 0 && <p class="detail">Records not yet on the controller: {missing.join(', ')}</p>}
      {extra.length > 0 && <p class="detail">Records only on the controller (Pull imports them): {extra.join(', ')}</p>}
      {s?.problem && s.problem !== action.outcome?.text && (
        <p class="message error" role="alert" data-testid="problem">
          {s.problem}
        </p>
      )}
      {s && s.reachable && !s.logged_in && <LoginForm id={controller.id} name={controller.name} onLoggedIn={refresh} />}
      <div class="actions">
        <Button busy={action.busy} disabled={!s?.logged_in} onClick={() => action.run(async () => {
          const r = await api.deploy({ id: controller.id });
          setState(r.state);
          return `Deployed: ${r.size} bytes, ETag ${shortEtag(r.etag)}, ${r.records_written} record(s) written`;
        })}>
          Deploy
        </Button>
        <Button busy={action.busy} onClick={refresh}>
          Refresh
        </Button>
        <DangerAction
          label="Pull"
          ariaLabel={`Pull ${controller.name}'s backup into the site…`}
          confirmLabel="Replace with the controller's"
          busy={action.busy}
          disabled={!s?.logged_in}
          loss={`Replace this site's configuration of ${controller.name} with the controller's backup, and import its records? The site's current configuration of ${controller.name} is lost (Export it first to keep a copy).`}
          onConfirm={() =>
            void action.run(async () => {
              const r = await api.pull({ id: controller.id });
              setState(r.state);
              return `Pulled: configuration ${shortEtag(r.etag)} and ${r.records} record(s) imported${r.canonical ? '' : ' (the controller\'s file is written differently: Deploy rewrites it in this configurator\'s form)'}`;
            })
          }
        />
      </div>
      <Message outcome={action.outcome} testId="row-message" />
    </article>
  );
}

function AddController({ onAdded }: { onAdded: () => void }) {
  const [name, setName] = useState('');
  const [address, setAddress] = useState('http://');
  const [hardwareClass, setHardwareClass] = useState('ctl-s3');
  const action = useAction();
  return (
    <ActionForm
      class="panel"
      aria-labelledby="add-title"
      action={action}
      run={async () => {
        const c = await api.addController({ body: { name, address, hardware_class: hardwareClass } });
        setName('');
        setAddress('http://');
        onAdded();
        return `Added ${c.name}`;
      }}
    >
      <h2 id="add-title">Add a controller</h2>
      <div class="row">
        <Field label="Name" value={name} onValue={setName} required maxLength={64} />
        <Field label="Address of its API" value={address} onValue={setAddress} required hint="http://address:port, as the controller (or fleet virtual) shows it" />
        <Field label="Hardware class" value={hardwareClass} onValue={setHardwareClass} required />
      </div>
      <Button type="submit" busy={action.busy}>
        Add controller
      </Button>
      <Message outcome={action.outcome} testId="add-message" />
    </ActionForm>
  );
}

export function ControllersPage() {
  const [controllers, setControllers] = useState<Controller[] | null>(null);
  const [round, setRound] = useState(0);
  const load = useAction();
  useEffect(() => {
    void load.run(async () => void setControllers((await api.site()).controllers));
  }, [round]);
  return (
    <main>
      <h1>Controllers</h1>
      <Message outcome={load.outcome} />
      {controllers && controllers.length === 0 && <p>No controllers yet: add the first one below.</p>}
      <div class="controllers">
        {controllers?.map((c) => (
          <ControllerRow key={c.id} controller={c} />
        ))}
      </div>
      <AddController onAdded={() => setRound((r) => r + 1)} />
    </main>
  );
}
