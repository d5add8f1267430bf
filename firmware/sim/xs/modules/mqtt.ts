// `mqtt` (modules/network/mqtt/mqtt.js, documentation/network/mqtt.md): the classic client, MQTT
// 3.1.1 QoS 0. new Client({host, port, id, user, password, timeout, Socket, secure}); onReady once
// the broker's CONNACK accepted; onClose when the connection ends; `publish(topic, data)` throws
// "connection closed" before onReady or after the end. The session itself runs on the host's MQTT
// client to the bench's broker (the CA travels as PEM); keep-alive pings are the host client's.
import { base64Encode } from '../../../src/core/bytes.ts';
import { bytesOf, hostCall, newId, onEvent } from '../host.ts';

const clients = new Map<number, Client>();

onEvent('mqtt', (event) => {
  const client = clients.get(event.id!);
  if (!client) return;
  if (event.message === 'ready') client._ready();
  else client._closed();
});

function pemOf(der: ArrayBuffer): string {
  const b64 = base64Encode(new Uint8Array(der));
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

export default class Client {
  onReady?: () => void;
  onClose?: () => void;
  onMessage?: (topic: string, payload: ArrayBuffer) => void;
  readonly #id = newId();
  #state: 'connecting' | 'ready' | 'closed' = 'connecting';

  constructor(options: { host: string; port?: number; id?: string; user?: string; password?: string; timeout?: number; Socket?: unknown; secure?: { certificate?: ArrayBuffer } }) {
    if (!options?.host) throw new Error('mqtt: host required');
    clients.set(this.#id, this);
    const ca = options.Socket && options.secure?.certificate ? pemOf(options.secure.certificate) : null;
    hostCall('mqtt.connect', { id: this.#id, host: options.host, port: options.port ?? (ca ? 8883 : 1883), clientId: options.id ?? '', username: options.user ?? null, password: options.password ?? null, keepAliveMs: options.timeout ?? 0, ca });
  }

  publish(topic: string, data: ArrayBuffer | string, _flags?: { retain?: boolean }): void {
    if (this.#state !== 'ready') throw new Error('connection closed');
    hostCall('mqtt.publish', { id: this.#id, topic }, bytesOf(data));
  }

  close(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    clients.delete(this.#id);
    hostCall('mqtt.close', { id: this.#id });
  }

  _ready(): void {
    if (this.#state !== 'connecting') return;
    this.#state = 'ready';
    this.onReady?.();
  }

  _closed(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    clients.delete(this.#id);
    this.onClose?.();
  }
}
