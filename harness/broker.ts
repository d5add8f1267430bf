// The bench's MQTT broker on loopback: aedes embedded by default, mosquitto (Debian's) when the rig
// names it. Boards reach it through a host-side bridge of real MQTT clients.
import { Aedes } from 'aedes';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import type { MqttBridge } from '../firmware/virtual-esp32/xs-board.ts';
import { freeLoopbackPort } from './ports.ts';

export interface Broker {
  host: string;
  port: number;
  kind: 'aedes' | 'mosquitto';
  /** Client ids that connected, in order, and topics published (embedded broker: seen by the broker; mosquitto: by the bridge). */
  connections: string[];
  publishes: { clientId: string; topic: string; payload: string }[];
  bridge: MqttBridge;
  close(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost)$/;

function bridgeTo(broker: Pick<Broker, 'connections' | 'publishes' | 'kind'>): { bridge: MqttBridge; closeAll: () => Promise<void> } {
  const clients = new Map<number, { client: MqttClient; clientId: string }>();
  let next = 1;
  return {
    bridge: {
      async connect(o) {
        if (!LOOPBACK.test(o.host)) throw new Error(`${o.host} is not on this machine`);
        const client = await connectAsync({
          host: o.host,
          port: o.port,
          clientId: o.clientId,
          ...(o.username ? { username: o.username } : {}),
          ...(o.password ? { password: o.password } : {}),
          reconnectPeriod: 0,
          connectTimeout: 5000,
          ...(o.ca ? { protocol: 'mqtts' as const, ca: o.ca } : {}),
        });
        if (broker.kind === 'mosquitto') broker.connections.push(o.clientId);
        const id = next++;
        clients.set(id, { client, clientId: o.clientId });
        return id;
      },
      async publish(id, topic, payload) {
        const c = clients.get(id);
        if (!c) throw new Error('no such MQTT session');
        await c.client.publishAsync(topic, Buffer.from(payload));
        if (broker.kind === 'mosquitto') broker.publishes.push({ clientId: c.clientId, topic, payload: Buffer.from(payload).toString() });
      },
      async close(id) {
        await clients.get(id)?.client.endAsync();
        clients.delete(id);
      },
    },
    closeAll: async () => {
      await Promise.all([...clients.values()].map((c) => c.client.endAsync(true)));
      clients.clear();
    },
  };
}

/** `host`: where it listens (loopback by default; a physical rig's bench address, docs/physical-rig.md). */
export async function startBroker(kind: 'aedes' | 'mosquitto', port = 0, host = '127.0.0.1'): Promise<Broker> {
  const state = { kind, connections: [] as string[], publishes: [] as Broker['publishes'] };
  const { bridge, closeAll } = bridgeTo(state);
  if (kind === 'mosquitto') return startMosquitto(state, bridge, closeAll, port, host);
  const aedes = await Aedes.createBroker();
  aedes.on('client', (client) => state.connections.push(client.id));
  aedes.on('publish', (packet, client) => {
    if (client) state.publishes.push({ clientId: client.id, topic: packet.topic, payload: packet.payload.toString() });
  });
  const server: Server = createServer((socket) => aedes.handle(socket));
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    ...state,
    host,
    port: (server.address() as AddressInfo).port,
    bridge,
    async close() {
      await closeAll();
      await new Promise<void>((r) => aedes.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function startMosquitto(state: Pick<Broker, 'kind' | 'connections' | 'publishes'>, bridge: MqttBridge, closeAll: () => Promise<void>, port: number, host: string): Promise<Broker> {
  const p = port || (await freeLoopbackPort());
  // A config file, not -p: -p would bind every interface; the bench stays on loopback.
  const dir = mkdtempSync(join(tmpdir(), 'mosquitto-'));
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, `listener ${p} ${host}\nallow_anonymous true\npersistence false\n`);
  let stderr = '';
  // Debian installs it in /usr/sbin, which is not on every user's PATH.
  const bin = existsSync('/usr/sbin/mosquitto') ? '/usr/sbin/mosquitto' : 'mosquitto';
  const child: ChildProcess = spawn(bin, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.on('data', (c) => (stderr += c));
  await new Promise<void>((resolve, reject) => {
    child.once('error', (err) => reject(new Error(`mosquitto could not start (apt-get install mosquitto): ${err.message}`)));
    child.once('exit', (code) => reject(new Error(`mosquitto exited with ${code}: ${stderr.trim()}`)));
    const deadline = Date.now() + 5000;
    const probe = () => {
      const s = connect(p, host);
      s.once('connect', () => (s.destroy(), resolve()));
      s.once('error', () => (Date.now() > deadline ? reject(new Error(`mosquitto did not listen on ${host}:${p}: ${stderr.trim()}`)) : setTimeout(probe, 50)));
    };
    probe();
  });
  return {
    ...state,
    host,
    port: p,
    bridge,
    async close() {
      await closeAll();
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
