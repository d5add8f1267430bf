// The console-sessions domain on PostgreSQL (types.ts has the contract, rows.ts the rows both halves share).
import { changed, type PostgresConnection } from '../postgres-pool.ts';
import { CONSOLE_SESSION_COLUMNS, consoleSessionFromRow, consoleSessionValues, type ConsoleSessionRow } from './rows.ts';
import type { ConsoleSessionStore } from './types.ts';

export function postgresConsoleSessions({ pool, tx }: PostgresConnection): ConsoleSessionStore {
  return {
    async createConsoleSession(session, nowMs) {
      await tx(async (c) => {
        await c.query('DELETE FROM console_sessions WHERE expires_at_ms <= $1', [nowMs]);
        await c.query(`INSERT INTO console_sessions (${CONSOLE_SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`, consoleSessionValues(session));
      });
    },
    async getConsoleSession(idHash, nowMs) {
      const { rows } = await pool.query<ConsoleSessionRow>('SELECT * FROM console_sessions WHERE id_hash = $1 AND expires_at_ms > $2', [idHash, nowMs]);
      return rows[0] ? consoleSessionFromRow(rows[0]) : null;
    },
    deleteConsoleSession: async (idHash) => changed(await pool.query('DELETE FROM console_sessions WHERE id_hash = $1', [idHash])),
  };
}
