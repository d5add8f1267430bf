// What a client says of its MQTT session (spec 3.5 step 6), in two places: on its console and in
// /api/status (`mqtt`: never, connected or failed, the broker, since when), and to the site's broker,
// as a retained message on its status topic with a retained will that says it went offline. The
// configurator reads that topic to tell an installer whether a provisioned client has reached the
// broker since (configurator/server/client-presence.ts, docs/configurator-clients.md).

/** `never`: no session tried since boot; `failed`: the last try did not connect. */
export const MQTT_STATES = Object.freeze(['never', 'connected', 'failed'] as const);
export type MqttState = (typeof MQTT_STATES)[number];

/** The retained status topic of one client. */
export function clientStatusTopic(uuid: string): string {
  return `devices/${uuid}/status`;
}

/** What a client publishes (retained) on its status topic: `online` once connected; its will says `offline`. */
export interface ClientStatusMessage {
  state: 'online' | 'offline';
  version?: string;
}

export interface ClientMqttReport {
  state: MqttState;
  /** host:port of the broker of the last try. */
  broker: string | null;
  /** When the state began (ISO 8601 UTC), or null before the clock is set. */
  since: string | null;
  /** Why the last try failed. */
  problem: string | null;
}

/** The client's MQTT state since boot, as the console's `status` shows it. */
export class ClientMqtt {
  private report: ClientMqttReport = { state: 'never', broker: null, since: null, problem: null };

  /** `now`: the wall clock, or null while it is not synchronized. */
  constructor(private readonly now: () => string | null) {}

  connected(broker: string): void {
    this.report = { state: 'connected', broker, since: this.now(), problem: null };
  }

  failed(broker: string, problem: string): void {
    this.report = { state: 'failed', broker, since: this.now(), problem };
  }

  status(): ClientMqttReport {
    return { ...this.report };
  }
}
