// The other workers of this `fleet serve`, as the cloud sees them (docs/cloud-workers.md): a change
// made on one worker (a release, a revocation, a rollout, a deployment of log levels) is broadcast
// through the supervisor, and the write is answered only once every other worker has applied it, so
// a client that changes something and then asks any worker sees its change. One process (WORKERS=1,
// the tests' in-process clouds) has no peers.
import type { PeerEvent, SupervisorMessage, WorkerMessage } from './messages.ts';
import { sendOrDrop } from './ipc.ts';
import { isSupervisorMessage } from './messages.ts';

export type { PeerEvent } from './messages.ts';

export interface Peers {
  /** Tells every other worker; resolves once each has applied it, or after the ack time-out. */
  broadcast(event: PeerEvent): Promise<void>;
  /** How this worker applies what another one broadcast (every handler given is called). */
  onEvent(apply: (event: PeerEvent) => Promise<void>): void;
}

/** A process alone. */
export const NO_PEERS: Peers = {
  broadcast: async () => undefined,
  onEvent: () => undefined,
};

/**
 * How long a broadcast waits for the other workers in the worst case (one is stuck, or its IPC
 * channel is gone): then the change still reaches them within OTA_CACHE_TTL_MS / APPCONFIG_REFRESH_MS,
 * as it reaches other instances sharing the store.
 */
export const BROADCAST_WAIT_MS = 2_000;

/** The peers of a cluster worker: messages to and from the supervisor on this process's IPC channel. */
export function clusterPeers(channel: NodeJS.Process = process): Peers {
  const waiting = new Map<number, () => void>();
  let nextId = 0;
  const handlers: ((event: PeerEvent) => Promise<void>)[] = [];
  const apply = async (event: PeerEvent) => {
    await Promise.all(handlers.map((h) => h(event)));
  };
  const send = (m: WorkerMessage) => {
    if (channel.connected) void sendOrDrop(channel, m);
  };
  channel.on('message', (m: unknown) => {
    if (!isSupervisorMessage(m)) return;
    const msg: SupervisorMessage = m;
    if (msg.t === 'broadcast-done') {
      waiting.get(msg.id)?.();
    } else if (msg.t === 'event') {
      // Applied, then acknowledged; a failure to apply is acknowledged too (the TTLs cover it).
      apply(msg.event)
        .catch(() => undefined)
        .finally(() => send({ t: 'applied', id: msg.id }));
    }
  });
  return {
    broadcast(event) {
      if (!channel.connected) return Promise.resolve();
      const id = ++nextId;
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve();
        };
        const timer = setTimeout(done, BROADCAST_WAIT_MS);
        waiting.set(id, done);
        send({ t: 'broadcast', id, event });
      });
    },
    onEvent(fn) {
      handlers.push(fn);
    },
  };
}
