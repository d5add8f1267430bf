// The audit log: every change an operator made through the admin API or the console, and what the
// cloud did by itself (a rollout paused on errors). Table: audit_log.

export interface AuditEntry {
  id: number;
  at: string;
  /** The token's subject, or `system` for what the cloud did by itself (a rollout paused on errors). */
  actor: string;
  /** `api` (a bearer token), `console` (the console's session cookie) or `system`. */
  via: 'api' | 'console' | 'system';
  action: string;
  method: string;
  path: string;
  status: number;
  details: Record<string, unknown> | null;
}

/** What a page of the log is limited to: one operator, one action, a time window (ISO 8601, UTC, as `at` is written). */
export interface AuditFilter {
  actor?: string;
  action?: string;
  /** At or after. */
  since?: string;
  /** Before. */
  until?: string;
}

export interface AuditStore {
  appendAudit(entry: Omit<AuditEntry, 'id'>): Promise<void>;
  /** Newest first; `beforeId` pages back, with the same filter. */
  listAudit(o: { limit: number; beforeId?: number } & AuditFilter): Promise<AuditEntry[]>;
}
