// A worker process of `fleet serve` (docs/cloud-workers.md): started by the supervisor through
// node:cluster, it serves the cloud on the port the workers share, with its own store connection and
// its share of the service's bounds, hears the other workers' changes through the supervisor, and
// stops cleanly on the supervisor's `shutdown` or on SIGTERM / SIGINT: requests in flight finished
// (up to SHUTDOWN_TIMEOUT_MS), the store closed, its counts sent, exit 0.
import { loadConfig } from '../config.ts';
import { startCloudServer, type RunningCloud } from '../server.ts';
import { startProblem } from '../start-problem.ts';
import { isSupervisorMessage, WORKER_SLOT_ENV, type WorkerMessage } from '../peers/messages.ts';
import { sendOrDrop } from '../peers/ipc.ts';
import { clusterPeers } from '../peers/peers.ts';
import { workerStats } from './stats.ts';
import { EXIT_CODES } from '../exit-codes.ts';

async function send(m: WorkerMessage): Promise<void> {
  if (process.connected) await sendOrDrop(process, m);
}

async function main(): Promise<void> {
  // The peers listen on the IPC channel from the start: an event sent while this worker starts is
  // acknowledged (and, the worker having no cache yet, changes nothing).
  const peers = clusterPeers();
  let running: RunningCloud;
  try {
    // The supervisor loaded the same configuration first (and created the JWT secret file).
    const config = loadConfig(process.env);
    running = await startCloudServer(config, { workers: config.workers, worker: Number(process.env[WORKER_SLOT_ENV] ?? 1), peers });
    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        const { cut } = await running.shutdown(config.shutdownTimeoutMs);
        const stats = workerStats(running, cut);
        await send({ t: 'stopped', stats });
        process.exit(0);
      })());
    process.on('message', (m: unknown) => {
      if (isSupervisorMessage(m) && m.t === 'shutdown') void stop();
    });
    // Ctrl-C reaches every process of the terminal's group; SIGTERM may be sent to one worker alone
    // (then the supervisor starts another in its slot).
    process.once('SIGTERM', () => void stop());
    process.once('SIGINT', () => void stop());
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const code = (err as NodeJS.ErrnoException).code;
    // A port in use or a configuration the supervisor accepted but this process cannot use: restarting
    // cannot help. Said as `fleet serve` in one process says it (cloud/start-problem.ts).
    let friendly: string | undefined;
    try {
      friendly = startProblem(err, loadConfig(process.env));
    } catch {
      friendly = undefined;
    }
    await send({ t: 'fatal', message: friendly ?? (code ? `${code}: ${message}` : message), exitCode: EXIT_CODES.config });
    process.exit(EXIT_CODES.config);
  }
}

await main();
