// The supervisor of `fleet serve` (docs/cloud-workers.md): one process that serves nothing itself. It
// opens the store once (the migrations run once, a bad DATABASE_URL is reported before any worker
// starts), starts WORKERS worker processes through node:cluster (they share the listening port: on
// Linux the supervisor accepts and hands connections to the workers in turn), relays the changes one
// worker broadcasts to the others, starts a worker again in its slot when one dies (backing off when
// it dies young), and on SIGTERM / SIGINT tells every worker to stop, waits for them (SHUTDOWN_TIMEOUT_MS
// and a margin, then SIGKILL), and resolves with the exit code: 0 when every worker stopped cleanly.
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { CloudConfig } from '../config.ts';
import { openStore } from '../store/index.ts';
import { sendOrDrop } from '../peers/ipc.ts';
import { isWorkerMessage, WORKER_SLOT_ENV, type SupervisorMessage, type WorkerMessage, type WorkerStats } from '../peers/messages.ts';
import { withWorkerHeap } from './heap.ts';
import { stoppedLine } from './stats.ts';

export interface SupervisorOptions {
  config: CloudConfig;
  /** Lifecycle lines (start, restarts, stop): stderr in `fleet serve`. */
  say: (line: string) => void;
  /** Called once every worker listens, with the URL they share. */
  onListening: (url: string, storeKind: string) => void;
  /** Resolves when the service is to stop (SIGTERM / SIGINT in `fleet serve`). */
  stopSignal: Promise<string>;
}

/** A worker that exits sooner than this after it started is restarted after a back-off. */
const YOUNG_EXIT_MS = 10_000;
const RESTART_BACKOFF_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000] as const;
/** Past the workers' own shutdown time-out, how long they get before SIGKILL. */
const KILL_MARGIN_MS = 5_000;

/** Set by the compiled command's build (bin/cli-build.js) to its compiled worker; absent when run from the sources. */
declare const FLEET_COMPILED_WORKER: string | undefined;
const COMPILED_WORKER = typeof FLEET_COMPILED_WORKER === 'string' ? FLEET_COMPILED_WORKER : undefined;
const WORKER_ENTRY = COMPILED_WORKER ?? fileURLToPath(new URL('./worker.ts', import.meta.url));

interface Slot {
  index: number;
  worker: Worker | undefined;
  startedAt: number;
  youngExits: number;
  /** Times this slot's worker was started again. */
  restarts: number;
  listening: boolean;
  stats: WorkerStats | undefined;
}

/** A broadcast in flight: who sent it, and the workers that have yet to apply it. */
interface Relay {
  from: Worker;
  id: number;
  waiting: Set<Worker>;
}

/**
 * node flags for a worker: this process's, the worker's heap (heap.ts), and tsx's loader (when run
 * from the TypeScript sources) unless present.
 */
function workerExecArgv(): string[] {
  const args = withWorkerHeap(process.execArgv);
  if (COMPILED_WORKER) return args;
  const tsx = import.meta.resolve('tsx');
  if (!args.some((a) => a.includes('tsx'))) args.push('--import', tsx);
  return args;
}

/** How the service ended: exit code 0, or another with what went wrong. */
export interface ServiceEnd {
  exitCode: number;
  problem?: string;
}

/** Runs the service until `stopSignal`. */
export async function superviseWorkers(opts: SupervisorOptions): Promise<ServiceEnd> {
  const { config, say } = opts;
  // Once, before any worker: the migrations run here, and a store that cannot be opened stops everything.
  const store = await openStore(config.databaseUrl);
  const storeKind = store.kind;
  await store.close();

  cluster.setupPrimary({ exec: WORKER_ENTRY, execArgv: workerExecArgv() });
  const slots: Slot[] = Array.from({ length: config.workers }, (_, i) => ({ index: i + 1, worker: undefined, startedAt: 0, youngExits: 0, restarts: 0, listening: false, stats: undefined }));
  const relays = new Map<number, Relay>();
  let nextRelay = 0;
  let stopping = false;
  let fatal: { message: string; exitCode: number } | undefined;
  let url: string | undefined;
  let settleStart: (() => void) | undefined;
  const started = new Promise<void>((r) => (settleStart = r));

  // A worker that died under the message needs none: its exit is handled below.
  const post = (w: Worker, m: SupervisorMessage) => {
    if (w.isConnected()) void sendOrDrop(w, m);
  };
  const live = () => slots.flatMap((s) => (s.worker && s.listening ? [s.worker] : []));
  const finishRelay = (relayId: number) => {
    const r = relays.get(relayId);
    if (!r || r.waiting.size > 0) return;
    relays.delete(relayId);
    post(r.from, { t: 'broadcast-done', id: r.id });
  };

  const onMessage = (slot: Slot, w: Worker, m: WorkerMessage) => {
    switch (m.t) {
      case 'broadcast': {
        const relayId = ++nextRelay;
        const others = live().filter((o) => o !== w);
        relays.set(relayId, { from: w, id: m.id, waiting: new Set(others) });
        for (const o of others) post(o, { t: 'event', id: relayId, event: m.event });
        finishRelay(relayId);
        break;
      }
      case 'applied':
        relays.get(m.id)?.waiting.delete(w);
        finishRelay(m.id);
        break;
      case 'fatal':
        if (!url) fatal ??= { message: m.message, exitCode: m.exitCode }; // every worker would say the same
        else say(`worker ${slot.index} could not start: ${m.message}`);
        break;
      case 'stopped':
        slot.stats = m.stats;
        break;
    }
  };

  const fork = (slot: Slot) => {
    // The resolved port and host (`fleet serve --port` overrides the environment), and the worker count.
    const w = cluster.fork({ PORT: String(config.port), HOST: config.host, WORKERS: String(config.workers), [WORKER_SLOT_ENV]: String(slot.index) });
    slot.worker = w;
    slot.startedAt = Date.now();
    slot.listening = false;
    w.on('message', (m: unknown) => {
      if (isWorkerMessage(m)) onMessage(slot, w, m);
    });
    // Sends drop their own failures (sendOrDrop); whatever else node reports about a worker (a signal
    // that could not be sent) is said, never left to end the supervisor and with it the service.
    w.on('error', (e: Error) => say(`worker ${slot.index} (pid ${w.process.pid}): ${e.message}`));
    w.on('listening', (address) => {
      slot.listening = true;
      const host = address.address?.includes(':') ? `[${address.address}]` : address.address;
      if (slot.restarts > 0) say(`worker ${slot.index} (pid ${w.process.pid}) serving again`);
      url ??= `http://${host}:${address.port}`;
      if (slots.every((s) => s.listening)) settleStart?.();
    });
    w.on('exit', (code, signal) => {
      if (slot.worker === w) slot.worker = undefined;
      slot.listening = false;
      // A worker gone applies nothing more: the broadcasts that waited for it are done without it.
      for (const [id, r] of relays) {
        r.waiting.delete(w);
        finishRelay(id);
      }
      if (stopping) return;
      if (!url) {
        // Before the service ever listened: a worker that cannot start stops everything.
        fatal ??= { message: `cannot serve: worker ${slot.index} exited with ${signal ?? code} while starting`, exitCode: 1 };
        settleStart?.();
        return;
      }
      const young = Date.now() - slot.startedAt < YOUNG_EXIT_MS;
      slot.youngExits = young ? slot.youngExits + 1 : 0;
      const delay = young ? RESTART_BACKOFF_MS[Math.min(slot.youngExits - 1, RESTART_BACKOFF_MS.length - 1)]! : 0;
      say(`worker ${slot.index} (pid ${w.process.pid}) exited with ${signal ?? `code ${code}`}: starting it again${delay ? ` in ${delay} ms` : ''}`);
      setTimeout(() => {
        if (stopping) return;
        slot.restarts++;
        fork(slot);
      }, delay);
    });
  };

  for (const slot of slots) fork(slot);
  await Promise.race([started, opts.stopSignal]);

  const end: ServiceEnd = { exitCode: 0 };
  if (fatal) {
    end.exitCode = fatal.exitCode;
    end.problem = fatal.message;
  } else if (url) {
    opts.onListening(url, storeKind);
    say(`stopping (${await opts.stopSignal}): finishing the requests in flight (up to ${config.shutdownTimeoutMs} ms)`);
  }

  // Stop: every worker finishes what it serves and closes its store; stragglers are killed.
  stopping = true;
  const exits = slots.flatMap((s) => (s.worker ? [new Promise<number | null>((r) => s.worker!.once('exit', (c, sig) => r(sig ? null : c)))] : []));
  for (const s of slots) if (s.worker) post(s.worker, { t: 'shutdown' });
  const killer = setTimeout(() => {
    for (const s of slots) {
      if (s.worker && s.worker.process.exitCode === null) {
        say(`worker ${s.index} (pid ${s.worker.process.pid}) did not stop within ${config.shutdownTimeoutMs + KILL_MARGIN_MS} ms: killed`);
        s.worker.process.kill('SIGKILL');
      }
    }
  }, config.shutdownTimeoutMs + KILL_MARGIN_MS);
  const codes = await Promise.all(exits);
  clearTimeout(killer);
  if (end.exitCode === 0 && codes.some((c) => c !== 0)) {
    end.exitCode = 1;
    end.problem = `a worker did not stop cleanly (exit ${codes.map((c) => c ?? 'killed').join(', ')})`;
  }

  const stats = slots.flatMap((s) => (s.stats ? [s.stats] : []));
  if (url) say(stoppedLine(stats, slots.length, storeKind));
  return end;
}
