// The SQLite store's two threads, as the store starts them (cloud/store/sqlite.ts): each program is a
// plain JavaScript file next to this one, loaded by node itself (a worker thread does not inherit tsx's
// loader, docs/sqlite-threads.md), checked by the type checker against the types below. The writer
// thread's client (SqliteWriterThread) is here too: the backups domain's SQLite half sends it its writes.
import { Worker } from 'node:worker_threads';

/** What the checkpointer thread (sqlite-checkpointer.js) is started with. */
export interface CheckpointerData {
  path: string;
  everyMs: number;
}

/** What the writer thread (sqlite-writer.js) is started with. */
export interface WriterData {
  path: string;
  autocheckpointPages: number;
  purgeEvery: number;
  sql: { recordNonce: string; purgeNonces: string; putBackup: string };
}

/** A write for the writer thread. */
export type WriterCall =
  | { op: 'nonce'; uuid: string; nonce: string; expiresAtMs: number; nowMs: number }
  | { op: 'putBackup'; uuid: string; blob: Uint8Array; etag: string | null; at: string };

/** A message to the writer thread: a write with the `id` its reply echoes, or `close`. */
export type WriterRequest = (WriterCall & { id: number }) | { op: 'close' };

/** The writer thread's answer to one request, after its commit. */
export interface WriterReply {
  id: number;
  value?: unknown;
  error?: { message: string; code?: string };
}

export function startCheckpointerThread(workerData: CheckpointerData): Worker {
  return new Worker(new URL('./sqlite-checkpointer.js', import.meta.url), { workerData });
}

interface PendingWrite {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

/**
 * The writer thread as the store talks to it (docs/fleet-scale.md): one message per write, answered
 * after its commit, in order. Held (ref) only while a write is pending: an idle writer does not keep
 * the process up, a pending one does (an awaited write must not be cut short by the process exiting).
 */
export class SqliteWriterThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, PendingWrite>();
  private nextId = 0;

  /** Starts the thread; undefined when none can start (the writes then stay on the store's connection). */
  static start(workerData: WriterData): SqliteWriterThread | undefined {
    try {
      return new SqliteWriterThread(new Worker(new URL('./sqlite-writer.js', import.meta.url), { workerData }));
    } catch {
      return undefined;
    }
  }

  private constructor(worker: Worker) {
    worker.unref();
    worker.on('message', (m: WriterReply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      if (m.error) p.reject(Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {}));
      else p.resolve(m.value);
    });
    // A writer that fails or exits: its pending writes are refused (their outcome is what SQLite
    // committed, if anything; a device retries with a fresh nonce) and later ones run inline.
    const gone = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      const pending = [...this.pending.values()];
      this.pending.clear();
      for (const p of pending) p.reject(new Error(`the SQLite writer thread ${why}`));
    };
    worker.on('error', (err) => gone(`failed: ${err.message}`));
    worker.on('exit', (code) => gone(`exited (${code})`));
    this.worker = worker;
  }

  /** Whether the thread takes writes: not once it failed or exited, nor after close. */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** A write on the thread (only while `running`); resolves after its commit. */
  call<T>(message: WriterCall, transfer: ArrayBuffer[] = []): Promise<T> {
    const worker = this.worker!;
    const id = ++this.nextId;
    return new Promise<T>((resolve, reject) => {
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...message, id }, transfer);
    });
  }

  /** Messages are handled in order: the writes already sent commit before the thread closes its connection. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((r) => worker.once('exit', () => r()));
    worker.ref();
    worker.postMessage({ op: 'close' } satisfies WriterRequest);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise<void>((r) => (timer = setTimeout(r, 5000)))]);
    clearTimeout(timer);
    this.worker = undefined;
    await worker.terminate();
  }
}
