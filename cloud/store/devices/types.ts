// Enrolled devices with their groups and inventory: what the cloud knows of each from its OTA checks
// (docs/device-inventory.md). Tables: devices, device_groups, device_inventory; an inventory flush also
// settles and offers rollout outcomes (rollout_outcomes) in its transaction, and the inventory query
// reads each device's backup (backups) and health (health_devices).
import type { DeviceHealthState } from '../health/types.ts';
import type { ReleaseTrack } from '../releases/types.ts';

export interface DeviceRecord {
  uuid: string;
  publicKeyPem: string;
  enrolledAt: string;
  updatedAt: string;
  /** Free text an operator gave at enrolment (rendered as text, never as markup). */
  label?: string | undefined;
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
  /** Devices whose last unexpected reboot is at or after this ISO time (docs/device-health.md). */
  crashedSince?: string;
  /** Devices whose last heartbeat's largest free block is below this many bytes. */
  lowHeapBelow?: number;
  /** Devices whose last reported version is older than the newest RELEASED version of the track they last checked on. */
  behind?: boolean;
  /** Devices whose latest update (the release they were offered last) failed. */
  failedUpdate?: boolean;
  /** How the conditions (notSeenSince, noBackupSince, crashedSince, lowHeapBelow, behind, failedUpdate) combine: every one given (the default) or any of them. */
  match?: 'all' | 'any';
  /** Keyset pagination: UUIDs after this one. */
  after?: string;
  limit: number;
}

/** Which track's devices a count of versions covers: every track, or those matching what is given. */
export interface TrackFilter {
  class?: string;
  productHex?: string;
  application?: string;
}

/** How many enrolled devices reported one version of one track at their last OTA check. */
export interface VersionCount {
  track: ReleaseTrack;
  version: string;
  devices: number;
  /** The release's status on that track; null: a version the cloud has no release of (a factory image never released). */
  status: 'RELEASED' | 'REVOKED' | null;
}

export interface InventoryRecord extends DeviceRecord {
  groups: string[];
  lastCheck: { at: string; version: string; track: ReleaseTrack } | null;
  offer: { version: string; fromVersion: string; at: string } | null;
  backup: { size: number; etag: string | null; lastBackupDate: string } | null;
  /** What its health reports said last (null: none yet). */
  health: DeviceHealthState | null;
}

export interface DeviceStore {
  getDevice(uuid: string): Promise<DeviceRecord | null>;
  listDevices(): Promise<DeviceRecord[]>;
  /** Enrolls or re-enrolls a device; `created` tells which. A label, when given, replaces the old one. */
  putDevice(uuid: string, publicKeyPem: string, at: string, label?: string): Promise<{ device: DeviceRecord; created: boolean }>;
  /** Removes a device with its nonces, inventory and group memberships (its backup and outcomes stay). */
  deleteDevice(uuid: string): Promise<boolean>;
  /** Sets a device's label, or clears it (null); false when the device does not exist. */
  setDeviceLabel(uuid: string, label: string | null, at: string): Promise<boolean>;
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
  /** Devices per version per track, from each device's last check: tracks in order, versions newest first, one query. */
  countDeviceVersions(filter: TrackFilter): Promise<VersionCount[]>;
}
