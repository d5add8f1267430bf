// Device health (docs/device-health.md): the reports boards send (boot, heartbeat, update), kept per
// device up to the newest HEALTH_REPORTS_KEPT; daily aggregates per device, release and day, which
// outlive them (HEALTH_DAYS_KEPT); each device's latest state (the inventory's health columns); and the
// latest update outcome of each device per version. Tables: health_reports, health_devices,
// health_daily, health_outcomes. Every row goes with its device when it is removed.
import type { BootReason, CrashKind, UnexpectedReason } from '../../health-definitions.ts';
import type { HealthReport } from '../../health-reports.ts';
import type { ReleaseTrack } from '../releases/types.ts';

// The reports' own types are the wire format's (cloud/health-reports.ts), re-exported here for the
// store's callers.
export type { BootReport, HealthReport, HeartbeatReport, UpdateReport } from '../../health-reports.ts';

export interface StoredHealthReport {
  /** When the cloud stored it. */
  receivedAt: string;
  report: HealthReport;
}

/** What an ingest did: stored, or not (that seq was stored before); and what it counted. */
export interface HealthIngest {
  stored: boolean;
  /** The version an unexpected reboot was counted against (docs/device-health.md, Definitions), if the report was one. */
  unexpectedOn: string | null;
}

/** A device's latest health as the inventory shows it (null parts: no such report yet). */
export interface DeviceHealthState {
  lastReportAt: string;
  lastBoot: { at: string; reason: BootReason; version: string } | null;
  /** The last unexpected reboot: the crash summary's kind, else the boot reason; its message when kept. */
  lastCrash: { at: string; kind: CrashKind | UnexpectedReason; message: string | null; version: string } | null;
  /** The last heartbeat: the largest free block and the lowest free heap since boot (bytes), the RSSI (dBm). */
  heartbeat: { at: string; block: number; heapMin: number; rssi: number | null } | null;
  /** Reports the board says it dropped (its last heartbeat that said). */
  dropped: number | null;
}

export type RebootCounts = Record<UnexpectedReason, number>;
export type CrashCounts = Record<CrashKind, number>;

/** One day of one device on one version (the UTC day the cloud received the reports). */
export interface HealthDay {
  day: string;
  version: string;
  reports: number;
  boots: number;
  heartbeats: number;
  /** Time the device ran the version, credited by the reports of that day (docs/device-health.md). */
  deviceSeconds: number;
  /** Unexpected reboots counted against the version, by reason; crash summaries by kind. */
  reboots: RebootCounts;
  crashes: CrashCounts;
  heapMin: number | null;
  blockMin: number | null;
  rssiMin: number | null;
}

/** Update outcomes of a version: each device counted once, by the last step it reported for it. */
export interface UpdateOutcomeCounts {
  inProgress: number;
  succeeded: number;
  /** Failures by reason, rolled_back apart. */
  failed: Record<string, number>;
  rolledBack: number;
}

/** A release's health, over the daily aggregates kept, of the devices whose last update check was on its track. */
export interface ReleaseHealthFigures extends ReleaseTrack {
  version: string;
  devices: number;
  /** Devices with at least one unexpected reboot counted against the version. */
  crashedDevices: number;
  deviceSeconds: number;
  boots: number;
  heartbeats: number;
  reboots: RebootCounts;
  crashes: CrashCounts;
  outcomes: UpdateOutcomeCounts;
}

export interface FleetHealthTotals {
  /** Enrolled devices, and those that sent at least one report. */
  devices: number;
  reporting: number;
  /** Devices whose last unexpected reboot is at or after `crashedSince`. */
  crashed: number;
  /** Devices whose last heartbeat's largest free block is below `lowHeapBelow`. */
  lowHeap: number;
  /** Reports the devices say they dropped, summed. */
  dropped: number;
}

export interface HealthStore {
  /**
   * Stores one report of an enrolled device in one transaction: the report, its device's state, the
   * daily aggregates it adds to, the update outcome it reports, and the retention (the oldest reports
   * past HEALTH_REPORTS_KEPT, the days past HEALTH_DAYS_KEPT). A seq stored before (or pruned since)
   * stores nothing. Null when the device is not enrolled (removed meanwhile).
   */
  putHealthReport(uuid: string, report: HealthReport, receivedAt: string): Promise<HealthIngest | null>;
  /** A device's reports, newest first; `beforeSeq` pages back. */
  listHealthReports(uuid: string, o: { limit: number; beforeSeq?: number }): Promise<StoredHealthReport[]>;
  /** A device's daily aggregates from `sinceDay` on, newest first. */
  listHealthDays(uuid: string, o: { sinceDay: string }): Promise<HealthDay[]>;
  /**
   * Health by release (track and version), of every release devices reported from, or of those asked
   * for (with a track and versions: each of them, zeros when nothing was reported).
   */
  releaseHealth(filter: { track?: ReleaseTrack; versions?: string[] }): Promise<ReleaseHealthFigures[]>;
  /** The fleet's totals. */
  healthTotals(o: { crashedSince: string; lowHeapBelow: number }): Promise<FleetHealthTotals>;
}
