// @ts-check
// The writer thread (docs/fleet-scale.md; started by cloud/store/sqlite.ts with `writer: 'worker'`): a
// file database's nonce inserts and backup writes on their own connection, off the event loop. One
// message per call, answered after the commit, in order; `close` closes the connection and exits.
/** @import { WriterData, WriterReply, WriterRequest } from './sqlite-threads.ts' */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const data = /** @type {WriterData} */ (workerData);
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const db = new Database(data.path);
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
db.pragma('wal_autocheckpoint = ' + data.autocheckpointPages);
const recordNonce = db.prepare(data.sql.recordNonce);
const purgeNonces = db.prepare(data.sql.purgeNonces);
const putBackup = db.prepare(data.sql.putBackup);
let sincePurge = 0;

/** @param {WriterReply} reply */
const reply = (reply) => port.postMessage(reply);

port.on('message', (/** @type {WriterRequest} */ m) => {
  if (m.op === 'close') {
    db.close();
    process.exit(0);
  }
  try {
    if (m.op === 'nonce') {
      if (++sincePurge >= data.purgeEvery) {
        sincePurge = 0;
        purgeNonces.run(m.nowMs);
      }
      reply({ id: m.id, value: recordNonce.run(m.uuid, m.nonce, m.expiresAtMs, m.nowMs).changes > 0 });
    } else if (m.op === 'putBackup') {
      putBackup.run(m.uuid, Buffer.from(m.blob.buffer, m.blob.byteOffset, m.blob.byteLength), m.etag, m.blob.byteLength, m.at);
      reply({ id: m.id, value: true });
    } else {
      const unknown = /** @type {{ id: number, op: unknown }} */ (m);
      reply({ id: unknown.id, error: { message: 'unknown writer operation ' + unknown.op } });
    }
  } catch (err) {
    const e = /** @type {{ message?: unknown, code?: string } | undefined} */ (err);
    reply({ id: m.id, error: { message: String(e && e.message), code: e && e.code } });
  }
});
