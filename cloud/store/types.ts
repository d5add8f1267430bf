// The one storage interface of the cloud. Routes only see this; SQLite (embedded default) and PostgreSQL
// (several instances sharing one database) fill it in, each from its halves of the domains below
// (docs/store-layout.md). Everything shared between instances lives here, including the nonce replay
// cache and appconfig deployments (never in process memory). All methods are async so that a networked
// database fits the same shape.
import type { AppconfigStore } from './appconfig/types.ts';
import type { AuditStore } from './audit/types.ts';
import type { BackupStore } from './backups/types.ts';
import type { ConsoleSessionStore } from './console-sessions/types.ts';
import type { DeviceStore } from './devices/types.ts';
import type { HealthStore } from './health/types.ts';
import type { ReleaseStore } from './releases/types.ts';
import type { StoreStats } from './stats.ts';

export type * from './appconfig/types.ts';
export type * from './audit/types.ts';
export type * from './backups/types.ts';
export type * from './console-sessions/types.ts';
export type * from './devices/types.ts';
export type * from './health/types.ts';
export type * from './releases/types.ts';
export type { StoreStats } from './stats.ts';

/** Every domain's repository: what a store is made of, one half of each per database. */
export interface DomainStores extends ReleaseStore, DeviceStore, BackupStore, AppconfigStore, AuditStore, ConsoleSessionStore, HealthStore {}

export interface CloudStore extends DomainStores {
  readonly kind: 'sqlite' | 'postgres';
  /** A cheap check that the store answers (used by /health). */
  ping(): Promise<void>;
  /** What the store counted since it opened. */
  stats(): StoreStats;
  close(): Promise<void>;
}
