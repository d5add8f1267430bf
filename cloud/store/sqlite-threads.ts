// The SQLite store's two threads, as the store starts them (cloud/store/sqlite.ts): each program is a
// plain JavaScript file next to this one, loaded by node itself (a worker thread does not inherit tsx's
// loader, docs/sqlite-threads.md), checked by the type checker against the types below.
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

export function startWriterThread(workerData: WriterData): Worker {
  return new Worker(new URL('./sqlite-writer.js', import.meta.url), { workerData });
}
