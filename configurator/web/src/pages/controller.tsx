// One controller: its configuration, provisioning, cloud backup and settings, with the log-in to it
// at the top while this browser is not logged in.
import { useEffect, useState } from 'preact/hooks';
import { api, type Controller } from '../api.ts';
import { DangerAction } from '../components/confirm.tsx';
import { LoginForm } from '../components/login.tsx';
import { ActionForm, Button, Field } from '../../../../web-common/browser/fields.tsx';
import { useAction } from '../../../../web-common/browser/hooks.ts';
import { Message } from '../components/ui.tsx';
import { CloudTab } from './cloud.tsx';
import { ConfigurationTab } from './configuration.tsx';
import { ProvisioningTab } from './provisioning.tsx';

const TABS = [
  ['configuration', 'Configuration'],
  ['provisioning', 'Provisioning'],
  ['cloud', 'Cloud backup'],
  ['settings', 'Settings'],
] as const;
export type Tab = (typeof TABS)[number][0];

function SettingsTab({ controller, onSaved }: { controller: Controller; onSaved: (c: Controller | null) => void }) {
  const [name, setName] = useState(controller.name);
  const [address, setAddress] = useState(controller.address);
  const [hardwareClass, setHardwareClass] = useState(controller.hardware_class);
  const action = useAction();
  return (
    <div>
      <ActionForm
        class="panel"
        aria-labelledby="settings-title"
        action={action}
        run={async () => {
          onSaved(await api.updateController({ id: controller.id, body: { name, address, hardware_class: hardwareClass } }));
          return 'Saved';
        }}
      >
        <h3 id="settings-title">This controller in the site</h3>
        <div class="row">
          <Field label="Name" value={name} onValue={setName} required maxLength={64} />
          <Field label="Address of its API" value={address} onValue={setAddress} required />
          <Field label="Hardware class" value={hardwareClass} onValue={setHardwareClass} required />
        </div>
        <Button type="submit" busy={action.busy}>
          Save
        </Button>
      </ActionForm>
      <section class="panel">
        <h3>Remove from the site</h3>
        <p class="detail">Removes the controller, its configuration and its records from this site. The controller itself keeps what it holds.</p>
        <DangerAction
          label="Remove…"
          ariaLabel={`Remove ${controller.name} from the site…`}
          confirmLabel={`Remove ${controller.name}`}
          busy={action.busy}
          loss={`Remove ${controller.name} from this site? Its configuration and the records it hands out are lost from the site file, and this browser's log-in to it ends. The controller itself keeps what it holds: add it again and Pull to get them back.`}
          onConfirm={() =>
            void action.run(async () => {
              await api.removeController({ id: controller.id });
              onSaved(null);
            })
          }
        />
      </section>
      <Message outcome={action.outcome} testId="settings-message" />
    </div>
  );
}

export function ControllerPage({ id, tab }: { id: number; tab: Tab }) {
  const [controller, setController] = useState<Controller | null>(null);
  const [loggedIn, setLoggedIn] = useState<boolean | null>(null);
  const [round, setRound] = useState(0);
  const action = useAction();
  useEffect(() => {
    void action.run(async () => {
      setController(await api.controller({ id }));
      const s = await api.state({ id });
      setLoggedIn(s.logged_in);
    });
  }, [id, round]);
  if (!controller) return <main><Message outcome={action.outcome} /></main>;
  return (
    <main>
      <p class="crumbs">
        <a href="#/">Controllers</a> ›
      </p>
      <h1>{controller.name}</h1>
      <p class="detail">
        {controller.address} · {controller.hardware_class}
        {loggedIn && (
          <>
            {' · logged in '}
            <Button class="link" onClick={() => action.run(async () => {
              await api.logout({ id });
              setRound((r) => r + 1);
            })}>
              Log out
            </Button>
          </>
        )}
      </p>
      {loggedIn === false && <LoginForm id={id} name={controller.name} onLoggedIn={() => setRound((r) => r + 1)} />}
      <nav class="tabs" aria-label="Controller sections">
        {TABS.map(([key, label]) => (
          <a key={key} href={`#/controllers/${id}/${key}`} aria-current={tab === key ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <Message outcome={action.outcome} />
      {tab === 'configuration' && <ConfigurationTab id={id} name={controller.name} />}
      {tab === 'provisioning' && <ProvisioningTab key={round} id={id} loggedIn={loggedIn === true} />}
      {tab === 'cloud' && <CloudTab key={round} id={id} name={controller.name} loggedIn={loggedIn === true} onChanged={() => undefined} />}
      {tab === 'settings' && (
        <SettingsTab
          controller={controller}
          onSaved={(c) => {
            if (c) setController(c);
            else location.hash = '#/';
          }}
        />
      )}
    </main>
  );
}

export const isTab = (v: string | undefined): v is Tab => TABS.some(([k]) => k === v);
