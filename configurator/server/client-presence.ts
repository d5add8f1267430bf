// Whether the site's clients have reached the site's MQTT broker: what each client itself reports
// there, a retained message on its status topic (`online` once connected; its will, `offline`, when
// its session ends without a goodbye; firmware/src/core/provisioning/client-mqtt.ts). The server
// connects to the broker the site's client settings name, as a client would (TLS with the site CA,
// the client credentials), reads the retained messages of the UUIDs asked, and leaves.
import { connectAsync } from 'mqtt';
import { randomBytes } from 'node:crypto';
import { clientStatusTopic, type ClientStatusMessage } from '../../firmware/src/core/provisioning/client-mqtt.ts';
import { brokerAddress, type ClientSettings } from '../schema/routes.ts';

export const PRESENCE_DEFAULTS = Object.freeze({
  /** The broker's CONNACK. */
  connectTimeoutMs: 5_000,
  /** After the SUBACK: the broker sends retained messages at once; this is slack for the socket. */
  settleMs: 300,
});

/** A firmware version as a client reports it (spec 2.1 YYYY.MM.bb, or a build's own short name). */
const VERSION = /^[\x21-\x7e]{1,32}$/;

export type Presence = { state: 'online' | 'offline'; version: string | null };

/**
 * What each client's retained status says; a UUID absent from the answer has said nothing on this
 * broker. Throws, with the broker named, when it cannot be reached or refuses the credentials.
 */
export async function readClientPresence(settings: ClientSettings, uuids: readonly string[], o: Partial<typeof PRESENCE_DEFAULTS> = {}): Promise<Map<string, Presence>> {
  const { connectTimeoutMs, settleMs } = { ...PRESENCE_DEFAULTS, ...o };
  const found = new Map<string, Presence>();
  if (uuids.length === 0) return found;
  const m = settings.mqtt;
  let client;
  try {
    client = await connectAsync({
      host: m.host,
      port: m.port,
      protocol: m.tls ? 'mqtts' : 'mqtt',
      ...(m.tls ? { ca: settings.ca_certificate, servername: m.host } : {}),
      ...(m.username ? { username: m.username } : {}),
      ...(m.password ? { password: m.password } : {}),
      clientId: `fleet-configurator-${randomBytes(6).toString('hex')}`,
      clean: true,
      connectTimeout: connectTimeoutMs,
      reconnectPeriod: 0,
    });
  } catch (err) {
    throw new Error(`The MQTT broker ${brokerAddress(settings.mqtt)} cannot be reached: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    const byTopic = new Map(uuids.map((u) => [clientStatusTopic(u), u]));
    client.on('message', (topic, payload) => {
      const uuid = byTopic.get(topic);
      if (!uuid) return;
      let m: Partial<ClientStatusMessage>;
      try {
        m = JSON.parse(payload.toString('utf8')) as Partial<ClientStatusMessage>;
      } catch {
        return; // not a client's status: nothing said
      }
      // Anyone with the client credentials may publish there: only a version as firmware writes one is shown.
      const version = typeof m.version === 'string' && VERSION.test(m.version) ? m.version : null;
      if (m.state === 'online' || m.state === 'offline') found.set(uuid, { state: m.state, version });
    });
    await client.subscribeAsync([...byTopic.keys()], { qos: 0 });
    await new Promise((r) => setTimeout(r, settleMs));
    return found;
  } finally {
    await client.endAsync(true).catch(() => undefined);
  }
}
