// The one storage interface of the cloud. Routes only see this; SQLite (embedded default) fills it in,
// and a PostgreSQL store can follow without touching the routes. Everything shared between
// instances lives here, including the nonce replay cache and appconfig deployments (never in process
// memory). All methods are async so that a networked database fits the same shape.

export type ReleaseStatus = 'RELEASED' | 'REVOKED';

/** class, product_hex (normalized to lower case), application: the scope of every OTA query. */
export interface ReleaseTrack {
  class: string;
  productHex: string;
  application: string;
}

export interface ImageMetadata {
  url?: string | undefined;
  size?: number | undefined;
  sha256?: string | undefined;
}

export interface FirmwareRelease extends ReleaseTrack, ImageMetadata {
  version: string;
  status: ReleaseStatus;
  releasedAt: string;
  revokedAt?: string | undefined;
}

export interface DeviceRecord {
  uuid: string;
  publicKeyPem: string;
  enrolledAt: string;
  updatedAt: string;
}

export interface BackupMeta {
  uuid: string;
  etag: string | null;
  size: number;
  lastBackupDate: string;
}

export interface StoredBackup extends BackupMeta {
  blob: Buffer;
}

export interface ConfigVersion {
  version: number;
  configuration: Record<string, unknown>;
  createdAt: string;
}

export interface Deployment {
  version: number;
  configuration: Record<string, unknown>;
  startedAt: string;
  /** The end of the bake time; until then the deployment is in progress. */
  endsAt: string;
}

/** Everything known of one function's runtime configuration. */
export interface FunctionConfigState {
  functionName: string;
  latest: ConfigVersion | null;
  deployment: Deployment | null;
}

export type DeployResult =
  | { ok: true; state: FunctionConfigState }
  | { ok: false; reason: 'in_progress' | 'nothing_staged'; state: FunctionConfigState };

export type DeleteConfigResult = { ok: true } | { ok: false; reason: 'in_progress' | 'not_found' };

export interface CloudStore {
  readonly kind: 'sqlite' | 'postgres';

  // Firmware releases
  listReleases(track: ReleaseTrack): Promise<FirmwareRelease[]>;
  /** Creates a RELEASED version; returns null if that version already exists on the track. */
  createRelease(release: FirmwareRelease): Promise<FirmwareRelease | null>;
  /** Marks a version REVOKED (idempotent); null if it does not exist. */
  revokeRelease(track: ReleaseTrack, version: string, at: string): Promise<FirmwareRelease | null>;

  // Devices
  getDevice(uuid: string): Promise<DeviceRecord | null>;
  listDevices(): Promise<DeviceRecord[]>;
  /** Enrolls or re-enrolls a device; `created` tells which. */
  putDevice(uuid: string, publicKeyPem: string, at: string): Promise<{ device: DeviceRecord; created: boolean }>;
  deleteDevice(uuid: string): Promise<boolean>;

  /**
   * Records a nonce for a device, atomically. Returns false when the nonce is already recorded
   * (a replay). Entries expire at `expiresAtMs` (epoch ms) and are purged lazily.
   */
  recordNonce(uuid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<boolean>;

  // Backups
  getBackupMeta(uuid: string): Promise<BackupMeta | null>;
  getBackup(uuid: string): Promise<StoredBackup | null>;
  /**
   * Stores a device's blob; resolves once it is durable. The caller gives `blob` up: it must not read
   * or change it after the call (the SQLite store moves its memory to its writer thread, after which
   * it reads as empty).
   */
  putBackup(uuid: string, blob: Buffer, etag: string | null, at: string): Promise<BackupMeta>;
  deleteBackup(uuid: string): Promise<boolean>;

  // Runtime configuration (appconfig)
  getFunctionConfig(functionName: string): Promise<FunctionConfigState>;
  /** Stages a new version (the latest); it is not deployed. */
  stageConfig(functionName: string, configuration: Record<string, unknown>, at: string): Promise<FunctionConfigState>;
  /**
   * Deploys the latest version when it is staged (newer than the deployed one), unless a deployment
   * is in progress at `nowMs`. Atomic; the in-progress check comes first.
   */
  startDeployment(functionName: string, nowMs: number, durationMs: number): Promise<DeployResult>;
  /** Removes every version and the deployment unless a deployment is in progress. Atomic. */
  deleteConfig(functionName: string, nowMs: number): Promise<DeleteConfigResult>;
  /** The deployed configuration of every function that has one. */
  listDeployments(): Promise<Map<string, Deployment>>;

  /** A cheap check that the store answers (used by /health). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
