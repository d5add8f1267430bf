// The operator console's sessions (docs/operator-console.md): in the store, so that a log-out on one
// worker or instance holds on every other. Table: console_sessions.

/**
 * An operator console session. Only SHA-256 hashes of its secrets are kept: reading the database
 * yields no cookie that would log anyone in, and no CSRF token.
 */
export interface ConsoleSessionRecord {
  /** SHA-256 (64 lower-case hex digits) of the opaque id the session cookie holds. */
  idHash: string;
  /** The token's subject; null when it had none. */
  subject: string | null;
  /** The token's groups claim at log-in: what the admin API authorizes the session with. */
  groups: string[];
  /** SHA-256 (hex) of the session's CSRF token. */
  csrfHash: string;
  createdAt: string;
  /** The token's `exp`, capped by the console's longest session (epoch ms); refused from then on. */
  expiresAtMs: number;
}

export interface ConsoleSessionStore {
  /** Stores a new session and removes every session expired at `nowMs`, in one transaction. */
  createConsoleSession(session: ConsoleSessionRecord, nowMs: number): Promise<void>;
  /** The session with this id hash unless it expired at `nowMs`; null when none. */
  getConsoleSession(idHash: string, nowMs: number): Promise<ConsoleSessionRecord | null>;
  /** Ends a session (log-out), expired or not; false when there was none. */
  deleteConsoleSession(idHash: string): Promise<boolean>;
}
