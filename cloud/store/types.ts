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
  /** The cloud hosts the image (docs/firmware-images.md); its chip and app descriptor's project. */
  hosted?: boolean | undefined;
  chip?: string | undefined;
  project?: string | undefined;
  /** The signature block of a hosted image that verified, and its key's digest (docs/secure-boot.md). */
  signedBy?: ImageSigner | undefined;
}

/** Which Secure Boot v2 signature block of an image verified (0 to 2), and the digest of the key that signed it. */
export interface ImageSigner {
  block: number;
  keyDigest: string;
}

/** A key a track trusts to sign its images: its digest (64 lower-case hex digits) and an operator's label. */
export interface TrustedSigningKey {
  digest: string;
  label?: string | undefined;
}

/** A track's signing setting (docs/secure-boot.md, The cloud): whether images must be signed, and by which keys. */
export interface TrackSigning {
  required: boolean;
  keys: TrustedSigningKey[];
  updatedAt: string;
}

export interface DeviceRecord {
  uuid: string;
  publicKeyPem: string;
  enrolledAt: string;
  updatedAt: string;
  /** Free text an operator gave at enrolment (rendered as text, never as markup). */
  label?: string | undefined;
}

/** A hosted image (docs/firmware-images.md): the bytes and what they are. */
export interface HostedImage {
  bytes: Buffer;
  sha256: string;
  size: number;
  status: ReleaseStatus;
  releasedAt: string;
}

export type RolloutState = 'active' | 'paused';

/** What an operator sets on a staged rollout (docs/staged-rollouts.md). */
export interface RolloutSettings {
  /** 0 to 100: the devices whose stable bucket (from their UUID) is below it. */
  percent: number;
  /** Devices in any of these groups are in, whatever their bucket. */
  groups: string[];
  /** The schedule: `stepPercent` more every `stepEverySeconds` while active; null: raised by hand only. */
  stepPercent: number | null;
  stepEverySeconds: number | null;
  /** Paused by itself when failed installs reach this share of the reported outcomes… */
  errorThresholdPercent: number;
  /** …once at least this many outcomes are in. */
  minReports: number;
}

export interface Rollout extends RolloutSettings, ReleaseTrack {
  version: string;
  state: RolloutState;
  /** When `percent` was last set: the schedule counts its steps from here. */
  anchorAtMs: number;
  pausedReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface OutcomeCounts {
  pending: number;
  succeeded: number;
  failed: number;
}

/** The last OTA check of a device and the version it was offered then, as the inventory keeps it. */
export interface OtaCheckState {
  uuid: string;
  lastCheckAt: string | null;
  /** The version offered at the last check (an upgrade), the track it is on, and what it ran then. */
  offer: { track: ReleaseTrack; version: string; fromVersion: string; at: string } | null;
}

/** What one flush of OTA checks writes for one device (cloud/ota/inventory.ts decides it). */
export interface OtaCheckWrite {
  uuid: string;
  at: string;
  version: string;
  track: ReleaseTrack;
  offer: { version: string; fromVersion: string } | null;
  /** An outcome the check settles for an earlier offer. */
  outcome: { track: ReleaseTrack; version: string; result: 'succeeded' | 'failed' } | null;
}

export interface InventoryFilter {
  /** Exactly this device. */
  uuid?: string;
  class?: string;
  productHex?: string;
  application?: string;
  /** The version the device reported at its last check. */
  version?: string;
  /** Devices whose last check is older than this ISO time, or that never checked. */
  notSeenSince?: string;
  /** Devices whose last backup is older than this ISO time, or that have none. */
  noBackupSince?: string;
  /** A part of the UUID or of the label (case-insensitive). */
  search?: string;
  group?: string;
  /** Keyset pagination: UUIDs after this one. */
  after?: string;
  limit: number;
}

export interface InventoryRecord extends DeviceRecord {
  groups: string[];
  lastCheck: { at: string; version: string; track: ReleaseTrack } | null;
  offer: { version: string; fromVersion: string; at: string } | null;
  backup: { size: number; etag: string | null; lastBackupDate: string } | null;
}

export interface TrackSummary extends ReleaseTrack {
  released: number;
  revoked: number;
  /** The newest RELEASED version, if any. */
  latest: string | null;
}

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

/**
 * An operator console session (docs/operator-console.md). Only SHA-256 hashes of its secrets are kept:
 * reading the database yields no cookie that would log anyone in, and no CSRF token.
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

/**
 * What a store counted since it opened, said once as a serve stops (docs/cloud-workers.md): its waits
 * for another process's write lock. SQLite answers SQLITE_BUSY and the store waits itself
 * (cloud/store/sqlite-busy.ts); PostgreSQL's server makes a statement wait for its locks, so its store
 * counts none.
 */
export interface StoreStats {
  /** Statements or transactions refused with SQLITE_BUSY, each tried again. */
  busy: number;
  /** Store calls that waited for another process's write lock, and the longest time one waited, ms. */
  calls: number;
  maxWaitMs: number;
  /** Transactions that ran a line of waiting writes together, once the lock was had. */
  batches: number;
  /** Store calls refused after the longest wait (answered 503). */
  gaveUp: number;
}

export interface CloudStore {
  readonly kind: 'sqlite' | 'postgres';

  // Firmware releases
  listReleases(track: ReleaseTrack): Promise<FirmwareRelease[]>;
  /** Every track that has a release, with its counts. */
  listTracks(): Promise<TrackSummary[]>;
  /**
   * Creates a RELEASED version, with its hosted image and its rollout when given, in one transaction;
   * returns null (and stores nothing) if that version already exists on the track.
   */
  createRelease(release: FirmwareRelease, extras?: { image?: Buffer; rollout?: Rollout }): Promise<FirmwareRelease | null>;
  /** Marks a version REVOKED (idempotent); null if it does not exist. */
  revokeRelease(track: ReleaseTrack, version: string, at: string): Promise<FirmwareRelease | null>;
  /** A hosted image with its release's status; null when the cloud hosts none for that version. */
  getImage(track: ReleaseTrack, version: string): Promise<HostedImage | null>;

  /** A track's signing setting; null when it was never set (signing off). */
  getTrackSigning(track: ReleaseTrack): Promise<TrackSigning | null>;
  /** Sets (replaces) a track's signing setting; the track need not have a release yet. */
  putTrackSigning(track: ReleaseTrack, signing: TrackSigning): Promise<TrackSigning>;

  // Staged rollouts (docs/staged-rollouts.md)
  /** The rollouts of a track, or of every track. */
  listRollouts(track?: ReleaseTrack): Promise<Rollout[]>;
  /** Creates or replaces a release's rollout; null when the release does not exist. */
  putRollout(rollout: Rollout): Promise<Rollout | null>;
  /**
   * Changes a rollout's state (pause, resume, raise), only when it is in `from` (when given); null
   * when there is no such rollout or it is not in `from`. Atomic.
   */
  updateRollout(
    track: ReleaseTrack,
    version: string,
    change: Partial<Pick<Rollout, 'state' | 'percent' | 'anchorAtMs' | 'pausedReason' | 'groups' | 'stepPercent' | 'stepEverySeconds'>> & { updatedAt: string },
    from?: RolloutState,
  ): Promise<Rollout | null>;
  deleteRollout(track: ReleaseTrack, version: string): Promise<boolean>;
  /** Update outcomes of one release (pending, succeeded, failed devices). */
  outcomeCounts(track: ReleaseTrack, version: string): Promise<OutcomeCounts>;

  // Devices
  getDevice(uuid: string): Promise<DeviceRecord | null>;
  listDevices(): Promise<DeviceRecord[]>;
  /** Enrolls or re-enrolls a device; `created` tells which. A label, when given, replaces the old one. */
  putDevice(uuid: string, publicKeyPem: string, at: string, label?: string): Promise<{ device: DeviceRecord; created: boolean }>;
  /** Removes a device with its nonces, inventory and group memberships (its backup and outcomes stay). */
  deleteDevice(uuid: string): Promise<boolean>;
  /** Replaces a device's groups; false when the device does not exist. */
  setDeviceGroups(uuid: string, groups: string[]): Promise<boolean>;
  /** The enrolled devices among `uuids` that are in any of `groups`. */
  devicesInGroups(groups: string[]): Promise<Set<string>>;

  // Device inventory (docs/device-inventory.md)
  /** The last OTA check of each enrolled device among `uuids` (unknown ones are left out). */
  getOtaCheckStates(uuids: string[]): Promise<Map<string, OtaCheckState>>;
  /** Records a batch of OTA checks, in order, in one transaction; devices not enrolled are skipped. */
  recordOtaChecks(writes: OtaCheckWrite[]): Promise<void>;
  /** Enrolled devices with what the cloud knows of them, by UUID, one query. */
  listInventory(filter: InventoryFilter): Promise<InventoryRecord[]>;

  // Audit log
  appendAudit(entry: Omit<AuditEntry, 'id'>): Promise<void>;
  /** Newest first; `beforeId` pages back. */
  listAudit(o: { limit: number; beforeId?: number }): Promise<AuditEntry[]>;

  // Operator console sessions (docs/operator-console.md)
  /** Stores a new session and removes every session expired at `nowMs`, in one transaction. */
  createConsoleSession(session: ConsoleSessionRecord, nowMs: number): Promise<void>;
  /** The session with this id hash unless it expired at `nowMs`; null when none. */
  getConsoleSession(idHash: string, nowMs: number): Promise<ConsoleSessionRecord | null>;
  /** Ends a session (log-out), expired or not; false when there was none. */
  deleteConsoleSession(idHash: string): Promise<boolean>;

  /**
   * Records a nonce for a device, atomically. Returns false when the nonce is already recorded
   * (a replay). Entries expire at `expiresAtMs` (epoch ms) and are purged lazily.
   */
  recordNonce(uuid: string, nonce: string, expiresAtMs: number, nowMs: number): Promise<boolean>;

  // Backups
  getBackupMeta(uuid: string): Promise<BackupMeta | null>;
  getBackup(uuid: string): Promise<StoredBackup | null>;
  /**
   * Stores a device's blob; resolves once it is durable. Until the call settles the caller must not
   * read or change `blob`; once it has settled the store holds no reference to it, and the caller may
   * reuse its memory (cloud/body-pool.ts) unless the store moved it (the SQLite writer thread: it then
   * reads as empty).
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
  /** What the store counted since it opened. */
  stats(): StoreStats;
  close(): Promise<void>;
}
