// The Mqtt HAL on Moddable's classic `mqtt` client (modules/network/mqtt/mqtt.js: MQTT 3.1.1, QoS 0),
// over SecureSocket when the client record carries a CA certificate (spec: a client's configuration
// holds its MQTT settings and CA). mqtt.js converts anything that is not an ArrayBuffer with
// ArrayBuffer.fromString, so payloads are handed over as exact ArrayBuffers.
import Client from 'mqtt';
import SecureSocket from 'securesocket';
import Timer from 'timer';
import { base64Decode } from '../../../core/bytes.ts';
import type { Mqtt, MqttOptions } from '../../../hal/system.ts';

const CONNACK_TIMEOUT_MS = 15_000;
/** Keep-alive: mqtt.js pings within 3/4 of it. */
const KEEPALIVE_MS = 60_000;

/** The DER bytes of the first certificate of a PEM text (SecureSocket takes DER). */
export function pemToDer(pem: string): ArrayBuffer {
  const m = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(pem);
  if (!m) throw new Error('the CA is not a PEM certificate');
  return base64Decode(m[1]!.replace(/\s+/g, '')).slice().buffer;
}

function exactBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : bytes.slice().buffer;
}

export class BoardMqtt implements Mqtt {
  connect(options: MqttOptions): ReturnType<Mqtt['connect']> {
    return new Promise((resolve, reject) => {
      const tls = options.ca ? { Socket: SecureSocket, secure: { certificate: pemToDer(options.ca), protocolVersion: 0x303 } } : {};
      const client = new Client({
        host: options.host,
        port: options.port,
        id: options.clientId,
        ...(options.username ? { user: options.username } : {}),
        ...(options.password ? { password: options.password } : {}),
        timeout: KEEPALIVE_MS,
        ...(options.will ? { will: { topic: options.will.topic, message: exactBuffer(options.will.payload), retain: true } } : {}),
        ...tls,
      });
      let ready = false;
      const timer = Timer.set(() => {
        try {
          client.close();
        } catch {
          /* never connected */
        }
        reject(new Error(`MQTT ${options.host}:${options.port}: no CONNACK within ${CONNACK_TIMEOUT_MS / 1000} s`));
      }, CONNACK_TIMEOUT_MS);
      client.onReady = () => {
        ready = true;
        Timer.clear(timer);
        resolve({
          publish: async (topic, payload, flags) => client.publish(topic, exactBuffer(payload), flags?.retain ? { retain: true } : undefined),
          close: async () => client.close(),
        });
      };
      client.onClose = () => {
        if (ready) return;
        Timer.clear(timer);
        reject(new Error(`MQTT ${options.host}:${options.port}: the broker closed the connection`));
      };
    });
  }
}
