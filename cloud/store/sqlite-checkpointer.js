// @ts-check
// The checkpointer thread (docs/fleet-scale.md; started by cloud/store/sqlite.ts for a file database):
// its own connection runs a PASSIVE checkpoint (never blocks the writer) every `everyMs`; any message
// asks it to checkpoint once more, close its connection and exit.
/** @import { CheckpointerData } from './sqlite-threads.ts' */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const data = /** @type {CheckpointerData} */ (workerData);
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const db = new Database(data.path);
db.pragma('busy_timeout = 100');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // busy or closing: next time
  }
}, data.everyMs);
port.on('message', () => {
  clearInterval(timer);
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {}
  db.close();
  process.exit(0);
});
