// Sending on an IPC channel between the supervisor of a `fleet serve` and its workers. The other end
// may die between "connected" and the write (a worker that could not start exits while the supervisor
// tells it to stop; a supervisor killed while a worker reports): the write then fails with EPIPE or
// ERR_IPC_CHANNEL_CLOSED, which node reports as an 'error' event that, unheard, ends the process.
// That message had no one to read it: the exit is handled where processes are watched, so the
// failure is dropped here and the sender is told through the result.

/** One end of a channel: a cluster Worker, a forked ChildProcess, or `process` in a worker. */
export interface IpcEnd {
  send?: (message: object, sendHandle: undefined, options: object, callback: (error: Error | null) => void) => boolean;
}

/** Sends `message`; resolves true once written, false when the channel is gone (never rejects, never emits 'error'). */
export function sendOrDrop(end: IpcEnd, message: object): Promise<boolean> {
  return new Promise((resolve) => {
    if (!end.send) return resolve(false);
    try {
      end.send(message, undefined, {}, (error) => resolve(!error));
    } catch {
      resolve(false);
    }
  });
}
