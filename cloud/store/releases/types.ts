// Firmware releases with what hangs on them: hosted images, each track's signing setting, staged
// rollouts and their outcomes (docs/firmware-images.md, docs/secure-boot.md, docs/staged-rollouts.md).
// Tables: firmware_releases, firmware_images, track_signing, rollouts, rollout_outcomes.

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
  /**
   * The health gate: paused by itself when the release's unexpected reboots per 1,000 device-hours exceed
   * the previous RELEASED version's by more than this (null: off)…
   */
  healthMargin: number | null;
  /** …once its devices have run it this many hours. */
  healthMinDeviceHours: number;
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

/** What `updateRollout` may change on a rollout, and when. */
export type RolloutChange = Partial<Pick<Rollout, 'state' | 'percent' | 'anchorAtMs' | 'pausedReason' | 'groups' | 'stepPercent' | 'stepEverySeconds'>> & { updatedAt: string };

export interface OutcomeCounts {
  pending: number;
  succeeded: number;
  failed: number;
}

/** One device's update outcome for a release (table rollout_outcomes). */
export interface OutcomeDevice {
  uuid: string;
  outcome: 'pending' | 'succeeded' | 'failed';
  /** The version it ran when it was offered this release. */
  fromVersion: string;
  offeredAt: string;
  settledAt: string | null;
  /** How many times it was offered the release. */
  attempts: number;
}

export interface TrackSummary extends ReleaseTrack {
  released: number;
  revoked: number;
  /** The newest RELEASED version, if any. */
  latest: string | null;
}

export interface ReleaseStore {
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
  updateRollout(track: ReleaseTrack, version: string, change: RolloutChange, from?: RolloutState): Promise<Rollout | null>;
  deleteRollout(track: ReleaseTrack, version: string): Promise<boolean>;
  /** Update outcomes of one release (pending, succeeded, failed devices). */
  outcomeCounts(track: ReleaseTrack, version: string): Promise<OutcomeCounts>;
  /** The devices behind those counts, by UUID; `outcome` picks one kind, `after` pages on. */
  outcomeDevices(track: ReleaseTrack, version: string, o: { outcome?: OutcomeDevice['outcome']; after?: string; limit: number }): Promise<OutcomeDevice[]>;
}
