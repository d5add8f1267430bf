// Provisioning on one controller (spec 3.2, 3.5, 3.6): enable, watch and disable the mode (SSID,
// password, time left, the allowlist it loaded); register the clients and target controllers it
// hands records to; and watch what the controller logs while a client or a target provisions
// (GET /api/events: "station … associated", "provisioning token issued to …").
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ClientReport, type ClientsReport, type DeviceEvent, type Provisioning, type RecordSummary } from '../api.ts';
import { ActionForm, Button, Field, Select } from '../../../../web-common/browser/fields.tsx';
import { useAction } from '../../../../web-common/browser/hooks.ts';
import { Confirm, DangerButton } from '../components/confirm.tsx';
import { Message } from '../components/ui.tsx';

const POLL_MS = 2000;
/** The clients' rows are read again this often while the tab is open: a client reaches the broker a while after its token (it reboots first). */
const CLIENTS_POLL_MS = 5000;
/** An entry logged before the controller's clock was set carries a time near 1970. */
const CLOCK_SET_MS = Date.UTC(2020, 0, 1);

const STOP_REASONS: Record<string, string> = {
  timeout: 'its time ran out',
  request: 'it was disabled',
  console: 'it was disabled on the serial console',
  mac_not_allowed: 'a device outside the allowlist associated: the SoftAP was shut down',
};

function timeLeft(seconds: number): string {
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

function ModePanel({ mode }: { mode: Provisioning | null }) {
  if (!mode) return <p class="detail">Reading the provisioning mode…</p>;
  if (!mode.active) {
    const why = mode.last_stop_reason ? STOP_REASONS[mode.last_stop_reason] ?? mode.last_stop_reason : null;
    return (
      <p class="detail" data-testid="mode">
        Provisioning mode is <strong>off</strong>
        {why ? ` (last stopped: ${why})` : ''}.
      </p>
    );
  }
  return (
    <dl class="facts" data-testid="mode">
      <dt>Mode</dt>
      <dd>
        <strong>on</strong>
      </dd>
      <dt>SSID</dt>
      <dd>{mode.ssid}</dd>
      <dt>Password</dt>
      <dd>
        <code>{mode.password}</code>
      </dd>
      <dt>BSSID</dt>
      <dd>
        <code>{mode.bssid}</code>
      </dd>
      <dt>Time left</dt>
      <dd data-testid="time-left">{timeLeft(mode.expires_in ?? 0)}</dd>
      <dt>Allowlist</dt>
      <dd data-testid="allowlist">{mode.allowlist_size} MAC(s)</dd>
    </dl>
  );
}

/** When the controller issued a client its token, as this configurator saw it logged. */
function provisionedText(c: ClientReport | undefined): string {
  if (!c) return '—';
  return c.provisioned_at ? new Date(c.provisioned_at).toLocaleString() : 'not yet';
}

/** What the client last said on the site's broker (its retained status). */
function mqttText(c: ClientReport | undefined): string {
  if (!c) return '—';
  switch (c.mqtt) {
    case 'online':
      return `connected${c.version ? ` (firmware ${c.version})` : ''}`;
    case 'offline':
      return 'connected, then went offline';
    case 'not_seen':
      return c.provisioned_at ? 'not connected since' : 'never connected';
    default:
      return 'broker not read';
  }
}

/** The columns of the records table. */
const COLUMNS = 8;

/**
 * A site's record with its Remove button: the confirmation opens in a row of its own below, the
 * table's whole width (docs/configurator-site.md, "Destructive actions").
 */
function SiteRecordRow({ record: r, where, client, loggedIn, busy, onRemove }: { record: RecordSummary; where: string; client?: ClientReport; loggedIn: boolean; busy: boolean; onRemove: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const what = r.name || r.uuid;
  return (
    <>
      <RecordRow record={r} where={where} client={client}>
        <DangerButton label="Remove" ariaLabel={`Remove ${what}…`} busy={busy} opener={opener} onOpen={() => setConfirming(true)} />
      </RecordRow>
      {confirming && (
        <tr class="confirm-row">
          <td colSpan={COLUMNS}>
            <Confirm
              confirmLabel={`Remove ${what}`}
              busy={busy}
              loss={`Remove ${r.kind === 'clients' ? 'client' : 'target controller'} ${r.name ? `${r.name} (${r.uuid})` : r.uuid} from this site${loggedIn ? ' and from the controller' : ' only (this browser is not logged in to the controller, which keeps its copy)'}? Its record, with the ${r.kind === 'clients' ? 'Wi-Fi and MQTT settings it hands out' : 'configuration it hands out'}, is lost: the device can no longer provision from this controller until it is registered again.`}
              onConfirm={() => {
                setConfirming(false);
                onRemove();
              }}
              onCancel={() => {
                setConfirming(false);
                opener.current?.focus();
              }}
            />
          </td>
        </tr>
      )}
    </>
  );
}

/** One record: a site's or one only the controller holds; a client's with its provisioning and broker state. */
function RecordRow({ record: r, where, client, children }: { record: RecordSummary; where: string; client?: ClientReport; children?: ComponentChildren }) {
  return (
    <tr data-testid={`record-${r.uuid}`}>
      <td data-label="Kind">{r.kind === 'clients' ? 'client' : 'controller'}</td>
      <td data-label="Name">{r.name}</td>
      <td data-label="UUID">
        <code>{r.uuid}</code>
      </td>
      <td data-label="MAC">
        <code>{r.mac}</code>
      </td>
      <td data-label="On the controller">{where}</td>
      <td data-label="Provisioned" data-testid="provisioned">{provisionedText(client)}</td>
      <td data-label="MQTT broker" data-testid="mqtt">{mqttText(client)}</td>
      <td>{children}</td>
    </tr>
  );
}

function RegisterForm({ id, onDone }: { id: number; onDone: () => void }) {
  const [kind, setKind] = useState<RecordSummary['kind']>('clients');
  const [name, setName] = useState('');
  const [uuid, setUuid] = useState('');
  const [mac, setMac] = useState('');
  const action = useAction();
  return (
    <ActionForm
      class="panel"
      aria-labelledby="register-title"
      action={action}
      run={async () => {
        const r = await api.addRecord({ id, body: { kind, uuid, name, mac } });
        setName('');
        setUuid('');
        setMac('');
        onDone();
        return `Registered ${r.record.uuid} (${r.record.mac})${r.on_controller ? ' and written to the controller' : `; ${r.problem}`}`;
      }}
    >
      <h3 id="register-title">Register a device</h3>
      <div class="row">
        <Select label="Kind" value={kind} options={[['clients', 'Client (its Wi-Fi MAC)'], ['controllers', 'Target controller (its Ethernet MAC)']]} onValue={(v) => setKind(v as RecordSummary['kind'])} />
        <Field label="Name" value={name} onValue={setName} maxLength={64} />
        <Field label="UUID" value={uuid} onValue={setUuid} required hint="as printed on the device or its console" />
        <Field label={kind === 'clients' ? 'Wi-Fi MAC' : 'Ethernet MAC'} value={mac} onValue={setMac} required hint="AA:BB:CC:DD:EE:FF" />
      </div>
      <Button type="submit" busy={action.busy}>
        Register
      </Button>
      <Message outcome={action.outcome} testId="register-message" />
    </ActionForm>
  );
}

export function ProvisioningTab({ id, loggedIn }: { id: number; loggedIn: boolean }) {
  const [mode, setMode] = useState<Provisioning | null>(null);
  const [events, setEvents] = useState<DeviceEvent[]>([]);
  const [site, setSite] = useState<RecordSummary[]>([]);
  const [device, setDevice] = useState<RecordSummary[] | null>(null);
  const [clients, setClients] = useState<ClientsReport | null>(null);
  /** The newest token the controller logged: a new one means a client provisioned, and its row is read again. */
  const lastToken = useRef('');
  const action = useAction();
  const watch = useAction();
  const records = useAction();
  const loadRecords = () =>
    records.run(async () => {
      setSite((await api.records({ id })).records);
      if (loggedIn) setDevice((await api.deviceRecords({ id })).records);
      setClients(await api.clients({ id }));
    });
  const poll = () =>
    watch.run(async () => {
      setMode(await api.provisioning({ id }));
      const got = (await api.events({ id })).events;
      setEvents(got);
      const token = got.filter((e) => e.message.startsWith('provisioning token issued')).map((e) => `${e.time} ${e.message}`).pop() ?? '';
      if (token !== lastToken.current) {
        lastToken.current = token;
        void loadRecords();
      }
    });
  useEffect(() => void loadRecords(), [id, loggedIn]);
  useEffect(() => {
    const t = setInterval(() => void api.clients({ id }).then(setClients, () => undefined), CLIENTS_POLL_MS);
    return () => clearInterval(t);
  }, [id]);
  useEffect(() => {
    if (!loggedIn) return;
    void poll();
    const t = setInterval(() => void poll(), POLL_MS);
    return () => clearInterval(t);
  }, [id, loggedIn]);
  const onDevice = new Set((device ?? []).map((r) => `${r.kind}/${r.uuid}`));
  return (
    <div>
      <section class="panel" aria-labelledby="mode-title">
        <h3 id="mode-title">Provisioning mode</h3>
        {loggedIn ? <ModePanel mode={mode} /> : <p class="detail">Log in to the controller to see and change its provisioning mode.</p>}
        <div class="actions">
          <Button busy={action.busy} disabled={!loggedIn || mode?.active} onClick={() => action.run(async () => {
            const m = await api.enableProvisioning({ id });
            setMode(m);
            return `Provisioning mode on: ${m.allowlist_size} MAC(s) allowed`;
          })}>
            Enable provisioning
          </Button>
          <Button busy={action.busy} disabled={!loggedIn || !mode?.active} onClick={() => action.run(async () => {
            await api.disableProvisioning({ id });
            setMode(await api.provisioning({ id }));
            return 'Provisioning mode off';
          })}>
            Disable provisioning
          </Button>
        </div>
        <Message outcome={action.outcome} testId="mode-message" />
        <Message outcome={watch.outcome} testId="watch-message" />
      </section>
      <section class="panel" aria-labelledby="records-title">
        <h3 id="records-title">Records this controller hands out</h3>
        <p class="detail">The allowlist is built from these MACs when the mode is enabled.</p>
        <table>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Name</th>
              <th scope="col">UUID</th>
              <th scope="col">MAC</th>
              <th scope="col">On the controller</th>
              <th scope="col">Provisioned</th>
              <th scope="col">MQTT broker</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {site.map((r) => (
              <SiteRecordRow
                key={`${r.kind}/${r.uuid}`}
                record={r}
                where={device === null ? '—' : onDevice.has(`${r.kind}/${r.uuid}`) ? 'yes' : 'no: Deploy writes it'}
                client={clients?.clients.find((c) => r.kind === 'clients' && c.uuid === r.uuid)}
                loggedIn={loggedIn}
                busy={records.busy}
                onRemove={() =>
                  void records.run(async () => {
                    await api.removeRecord({ id, kind: r.kind, uuid: r.uuid });
                    await loadRecords();
                    return `Removed ${r.uuid}`;
                  })
                }
              />
            ))}
            {(device ?? [])
              .filter((r) => !site.some((s) => s.kind === r.kind && s.uuid === r.uuid))
              .map((r) => (
                <RecordRow key={`device-${r.kind}/${r.uuid}`} record={r} where="only there (Pull imports it)" />
              ))}
          </tbody>
        </table>
        {clients?.broker && <p class="detail">Clients' MQTT state: what each said last on the site's broker {clients.broker} (Client settings).</p>}
        {clients?.problems.map((p) => (
          <p key={p} class="message error" data-testid="clients-problem">
            {p}
          </p>
        ))}
        <Message outcome={records.outcome} testId="records-message" />
      </section>
      <RegisterForm id={id} onDone={() => void loadRecords()} />
      <section class="panel" aria-labelledby="events-title">
        <h3 id="events-title">What the controller logged</h3>
        {!loggedIn && <p class="detail">Log in to watch the controller's event log.</p>}
        <ol class="events" aria-live="polite" data-testid="events">
          {events
            .slice()
            .reverse()
            .map((e, i) => (
              <li key={`${e.time}-${i}`} class={e.level}>
                <time>{e.time >= CLOCK_SET_MS ? new Date(e.time).toLocaleTimeString() : 'before clock set'}</time> <span class="source">{e.source}</span> {e.message}
              </li>
            ))}
        </ol>
      </section>
    </div>
  );
}
