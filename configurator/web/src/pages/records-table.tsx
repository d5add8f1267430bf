// The records a controller hands out (spec 2.6), as the Provisioning tab's table shows them: the
// site's, with where each is, a client's provisioning and broker state (docs/configurator-clients.md)
// and its Remove, which asks first in a row of its own (docs/configurator-site.md, "Destructive
// actions"); and those only the controller holds.
import type { ComponentChildren } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { ClientReport, ClientsReport, RecordSummary } from '../api.ts';
import { Confirm, DangerButton } from '../components/confirm.tsx';

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
function SiteRecordRow({ record: r, where, client, loggedIn, busy, onRemove }: { record: RecordSummary; where: string; client: ClientReport | undefined; loggedIn: boolean; busy: boolean; onRemove: () => void }) {
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

/** The table: a site record per row (a confirmation row below one being removed), then the controller's own. */
export function RecordsTable({ site, device, clients, loggedIn, busy, onRemove }: { site: RecordSummary[]; device: RecordSummary[] | null; clients: ClientsReport | null; loggedIn: boolean; busy: boolean; onRemove: (r: RecordSummary) => void }) {
  const onDevice = new Set((device ?? []).map((r) => `${r.kind}/${r.uuid}`));
  return (
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
            busy={busy}
            onRemove={() => onRemove(r)}
          />
        ))}
        {(device ?? [])
          .filter((r) => !site.some((s) => s.kind === r.kind && s.uuid === r.uuid))
          .map((r) => (
            <RecordRow key={`device-${r.kind}/${r.uuid}`} record={r} where="only there (Pull imports it)" />
          ))}
      </tbody>
    </table>
  );
}
