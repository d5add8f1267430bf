// The bench's MQTT broker on loopback: aedes embedded by default, mosquitto (Debian's) when the rig
// names it. Boards connect to it themselves: their firmware's MQTT client (the Moddable SDK's `mqtt`)
// over their own sockets. What the scenarios check is what the broker saw: the client ids that
// connected and what they published. Aedes says so through its events; mosquitto through its log
// (connections, and which client published to which topic) and a monitor subscribed to every topic
// (the payloads). A client's will, which the broker publishes for it, counts as its publish with both.
import { Aedes } from 'aedes';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { stopChild } from './child-process.ts';
import { freeLoopbackPort } from './ports.ts';

export interface Broker {
  host: string;
  port: number;
  kind: 'aedes' | 'mosquitto';
  /** Client ids that connected, in order, and what they published. */
  connections: string[];
  publishes: { clientId: string; topic: string; payload: string }[];
  close(): Promise<void>;
}

/** `host`: where it listens (loopback by default; a physical rig's bench address, docs/physical-rig.md). */
export async function startBroker(kind: 'aedes' | 'mosquitto', port = 0, host = '127.0.0.1'): Promise<Broker> {
  const state = { kind, connections: [] as string[], publishes: [] as Broker['publishes'] };
  if (kind === 'mosquitto') return startMosquitto(state, port, host);
  const aedes = await Aedes.createBroker();
  aedes.on('client', (client) => state.connections.push(client.id));
  aedes.on('publish', (packet, client) => {
    if (client) state.publishes.push({ clientId: client.id, topic: packet.topic, payload: packet.payload.toString() });
  });
  // Every connection, so that close() ends those aedes does not know (no CONNECT yet, a raw TCP
  // client of `fleet virtual`'s printed broker): server.close() would wait for them for ever.
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    aedes.handle(socket);
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return {
    ...state,
    host,
    port: (server.address() as AddressInfo).port,
    async close() {
      await new Promise<void>((r) => aedes.close(() => r()));
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/**
 * mosquitto's log lines (log_type notice and debug): a client connecting, and a client publishing.
 * A will is published by the broker itself, with no "Received PUBLISH": the log names it at the
 * CONNECT ("Will message specified", then its topic on a line of its own), and its session's end
 * without a DISCONNECT sends it. Counted as that client's publish, as aedes reports it.
 */
const CONNECTED = /New client connected from \S+ as (\S+) /;
const PUBLISHED = /Received PUBLISH from (\S+) \(d\d, q\d, r\d, m\d+, '([^']*)'/;
const WILL_GIVEN = /Will message specified \(\d+ bytes\)/;
const WILL_TOPIC = /^\d+: \t(.+)$/;
const CLEAN_END = /Received DISCONNECT from (\S+)/;
const ABRUPT_END = /Client (\S+) (?:closed its connection|has exceeded timeout)|Socket error on client (\S+),/;
const MONITOR_ID = 'bench-broker-monitor';

async function startMosquitto(state: Pick<Broker, 'kind' | 'connections' | 'publishes'>, port: number, host: string): Promise<Broker> {
  const p = port || (await freeLoopbackPort());
  // A config file, not -p: -p would bind every interface; the bench stays on loopback.
  const dir = mkdtempSync(join(tmpdir(), 'mosquitto-'));
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(conf, `listener ${p} ${host}\nallow_anonymous true\npersistence false\nlog_dest stderr\nlog_type notice\nlog_type debug\nconnection_messages true\n`);
  let stderr = '';
  let partial = '';
  // Publishes the log names, waiting for the payload the monitor receives (in the same order per topic).
  const waiting = new Map<string, string[]>();
  const received = new Map<string, string[]>();
  /** Each connected client's will topic; the client whose CONNECT the log is describing. */
  const wills = new Map<string, string>();
  let lastConnected = '';
  let willOf: string | null = null;
  const match = (topic: string) => {
    const ids = waiting.get(topic);
    const payloads = received.get(topic);
    while (ids?.length && payloads?.length) state.publishes.push({ clientId: ids.shift()!, topic, payload: payloads.shift()! });
  };
  // Debian installs it in /usr/sbin, which is not on every user's PATH.
  const bin = existsSync('/usr/sbin/mosquitto') ? '/usr/sbin/mosquitto' : 'mosquitto';
  const child: ChildProcess = spawn(bin, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString();
    stderr = (stderr + chunk.toString()).slice(-4000);
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const connected = CONNECTED.exec(line);
      if (connected) {
        lastConnected = connected[1]!;
        wills.delete(lastConnected);
        if (connected[1] !== MONITOR_ID) state.connections.push(connected[1]!);
      }
      if (WILL_GIVEN.test(line)) willOf = lastConnected;
      const willTopic = WILL_TOPIC.exec(line);
      if (willTopic && willOf !== null) {
        wills.set(willOf, willTopic[1]!);
        willOf = null;
      }
      const clean = CLEAN_END.exec(line);
      if (clean) wills.delete(clean[1]!);
      const abrupt = ABRUPT_END.exec(line);
      const gone = abrupt ? (abrupt[1] ?? abrupt[2])! : null;
      const published = PUBLISHED.exec(line) ?? (gone !== null && wills.has(gone) ? [line, gone, wills.get(gone)!] : null);
      if (gone !== null) wills.delete(gone);
      if (published && published[1] !== MONITOR_ID) {
        waiting.set(published[2]!, [...(waiting.get(published[2]!) ?? []), published[1]!]);
        match(published[2]!);
      }
    }
  });
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
  const monitor = await connectAsync({ host, port: p, clientId: MONITOR_ID, reconnectPeriod: 0, connectTimeout: 5000 });
  monitor.on('message', (topic, payload) => {
    received.set(topic, [...(received.get(topic) ?? []), payload.toString()]);
    match(topic);
  });
  await monitor.subscribeAsync('#');
  return {
    ...state,
    host,
    port: p,
    async close() {
      await monitor.endAsync(true);
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
