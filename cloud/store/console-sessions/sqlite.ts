// The console-sessions domain on SQLite (types.ts has the contract, rows.ts the rows both halves share).
import type { SqliteConnection } from '../sqlite-connection.ts';
import { CONSOLE_SESSION_COLUMNS, consoleSessionFromRow, consoleSessionValues, type ConsoleSessionRow } from './rows.ts';
import type { ConsoleSessionStore } from './types.ts';

export function sqliteConsoleSessions(c: SqliteConnection): ConsoleSessionStore {
  const { db } = c;
  const stmts = {
    insert: db.prepare(`INSERT INTO console_sessions (${CONSOLE_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`),
    prune: db.prepare(`DELETE FROM console_sessions WHERE expires_at_ms <= ?`),
    get: db.prepare<[string, number], ConsoleSessionRow>(`SELECT * FROM console_sessions WHERE id_hash = ? AND expires_at_ms > ?`),
    delete: db.prepare(`DELETE FROM console_sessions WHERE id_hash = ?`),
  };
  return {
    createConsoleSession: (session, nowMs) =>
      c.transaction(() => {
        stmts.prune.run(nowMs);
        stmts.insert.run(...consoleSessionValues(session));
      }),
    getConsoleSession: (idHash, nowMs) =>
      c.read(() => {
        const r = stmts.get.get(idHash, nowMs);
        return r ? consoleSessionFromRow(r) : null;
      }),
    deleteConsoleSession: (idHash) => c.write(() => stmts.delete.run(idHash).changes > 0),
  };
}
