// Provisioning on one controller (spec 3.2, 3.5, 3.6): enable, watch and disable the mode (SSID,
// password, time left, the allowlist it loaded); register the clients and target controllers it
// hands records to (their table: records-table.tsx); and watch what the controller logs while a client or a target provisions
// (GET /api/events: "station … associated", "provisioning token issued to …").
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ClientsReport, type DeviceEvent, type Provisioning, type RecordSummary } from '../api.ts';
import { ActionForm, Button, Field, Select } from '../../../../web-common/browser/fields.tsx';
import { useAction } from '../../../../web-common/browser/hooks.ts';
import { Message } from '../components/ui.tsx';
import { RecordsTable } from './records-table.tsx';

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
  /** The newest line the controller logged: after a new one (a token issued, a station associated) the rows are read again. */
  const lastEvent = useRef('');
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
      const newest = got.length ? `${got[got.length - 1]!.time} ${got[got.length - 1]!.message}` : '';
      if (newest !== lastEvent.current) {
        lastEvent.current = newest;
        void loadRecords();
      }
    });
  useEffect(() => void loadRecords(), [id, loggedIn]);
  useEffect(() => {
    // One read at a time (a broker that does not answer takes its 5 s time-out). A failure here is
    // loadRecords' to show (it reads the same route): the last rows stay meanwhile.
    let reading = false;
    const t = setInterval(() => {
      if (reading) return;
      reading = true;
      void api.clients({ id }).then(setClients, () => undefined).finally(() => (reading = false));
    }, CLIENTS_POLL_MS);
    return () => clearInterval(t);
  }, [id]);
  useEffect(() => {
    if (!loggedIn) return;
    void poll();
    const t = setInterval(() => void poll(), POLL_MS);
    return () => clearInterval(t);
  }, [id, loggedIn]);
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
        <RecordsTable
          site={site}
          device={device}
          clients={clients}
          loggedIn={loggedIn}
          busy={records.busy}
          onRemove={(r) =>
            void records.run(async () => {
              await api.removeRecord({ id, kind: r.kind, uuid: r.uuid });
              await loadRecords();
              return `Removed ${r.uuid}`;
            })
          }
        />
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
