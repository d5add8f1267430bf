// SIGINT and SIGTERM for the long-running commands (serve, virtual, monitor, bench): the first signal
// asks the command to stop, and it closes its boards, servers and ports; if that has not ended the
// process within a few seconds, or a second signal comes, the process exits anyway and says what it
// was still closing. Installed when the command starts, so that a signal during start-up is a stop too.
// What must not outlive the process even then (a work folder in the system's temp folder) is given to
// atForcedExit and removed before that exit.

export const STOP_GRACE_MS = 5000;

export interface StopSignals {
  /** Resolves with the first SIGINT or SIGTERM. */
  readonly stopped: Promise<NodeJS.Signals>;
  /** The signal received, if any. */
  readonly signal: NodeJS.Signals | undefined;
  /** What the command is closing now, for the message if it overruns the grace period. */
  closing(what: string): void;
  /** Synchronous clean-up that runs before a forced exit too (a work folder removed); in the order given. */
  atForcedExit(cleanUp: () => void): void;
  /** Removes the handlers (the command has ended). */
  dispose(): void;
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 2, SIGTERM: 15 };

export function onStopSignals(name: string, o: { graceMs?: number; exit?: (code: number) => void } = {}): StopSignals {
  const graceMs = o.graceMs ?? STOP_GRACE_MS;
  const exit = o.exit ?? ((code: number) => process.exit(code));
  let received: NodeJS.Signals | undefined;
  let what = 'its resources';
  let resolveStopped!: (s: NodeJS.Signals) => void;
  const stopped = new Promise<NodeJS.Signals>((r) => (resolveStopped = r));
  let timer: NodeJS.Timeout | undefined;
  const cleanUps: (() => void)[] = [];
  const forced = (signal: NodeJS.Signals, why: string) => {
    process.stderr.write(`${name}: ${why} while closing ${what}: exiting now\n`);
    for (const cleanUp of cleanUps) {
      try {
        cleanUp();
      } catch (err) {
        process.stderr.write(`${name}: ${(err as Error).message}\n`);
      }
    }
    exit(128 + (SIGNAL_NUMBERS[signal] ?? 0));
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) return forced(signal, `${signal} again`);
    received = signal;
    // Unreferenced: it never keeps the process alive, but fires if something else does past the grace.
    timer = setTimeout(() => forced(signal, `still running ${graceMs / 1000} s after ${signal}`), graceMs);
    timer.unref();
    resolveStopped(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    stopped,
    get signal() {
      return received;
    },
    closing(next: string) {
      what = next;
    },
    atForcedExit(cleanUp: () => void) {
      cleanUps.push(cleanUp);
    },
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      // The timer stays: if the process still does not end, it says so and exits.
    },
  };
}
