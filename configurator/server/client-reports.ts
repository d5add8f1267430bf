// A controller's clients as the provisioning page's rows show them (docs/configurator-clients.md):
// when each was provisioned, from what the controller reports (its event log's "provisioning token
// issued to …" line, noted in the site since the log keeps only its newest lines), and whether it has
// reached the site's MQTT broker since, from what the client reports there (client-presence.ts).
import { API_PATHS } from '../../firmware/src/core/api-paths.ts';
import { tokenIssuedMessage } from '../../firmware/src/core/provisioning/tokens.ts';
import { brokerAddress, type ClientsReport, type Controller, type DeviceEvent } from '../schema/routes.ts';
import { ANSWERS } from './device-answers.ts';
import type { DeviceOps } from './device-ops.ts';
import { ConfiguratorError, ControllerAnswerError } from './errors.ts';
import { readClientPresence, type Presence } from './client-presence.ts';
import type { Session } from './sessions.ts';
import type { SiteStore } from './site-store.ts';

/** An entry logged before the controller's clock was set carries a time near 1970: it says nothing of when. */
const CLOCK_SET_MS = Date.UTC(2020, 0, 1);

export async function clientReports(store: SiteStore, ops: DeviceOps, session: Session, c: Controller): Promise<ClientsReport> {
  const clients = store.records(c.id).filter((r) => r.kind === 'clients');
  const problems: string[] = [];
  if (session.tokens.has(c.id) && clients.length > 0) {
    try {
      const { events } = (await ops.call(session, c, 'GET', API_PATHS.events, [200], { answer: ANSWERS.events })).json as { events: DeviceEvent[] };
      for (const r of clients) {
        const line = tokenIssuedMessage(r.mac, 'clients', r.uuid);
        for (const e of events) if (e.message === line && e.time >= CLOCK_SET_MS) store.markProvisioned(c.id, 'clients', r.uuid, new Date(e.time).toISOString());
      }
    } catch (err) {
      if (!(err instanceof ConfiguratorError || err instanceof ControllerAnswerError)) throw err;
      problems.push(err.message);
    }
  }
  const settings = store.clientSettings();
  let presence: Map<string, Presence> | null = null;
  if (settings && clients.length > 0) {
    try {
      presence = await readClientPresence(settings, clients.map((r) => r.uuid));
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  const provisioned = store.provisionedAt(c.id);
  return {
    broker: settings ? brokerAddress(settings.mqtt) : null,
    problems,
    clients: clients.map((r) => {
      const p = presence?.get(r.uuid);
      return {
        uuid: r.uuid,
        name: r.name,
        mac: r.mac,
        provisioned_at: provisioned.get(`clients/${r.uuid}`) ?? null,
        mqtt: presence === null ? 'unknown' : p ? p.state : 'not_seen',
        version: p?.version ?? null,
      };
    }),
  };
}
