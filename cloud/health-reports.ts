// The three reports a board sends (docs/device-health.md, the wire format), as types: the store keeps
// them as sent, the admin API answers them in a device's timeline, the CLI and the console print them.
// Types only, with no import beyond the definitions, so the console's page (DOM types, no Node) can
// read them. Their schemas, which the ingest route checks, are cloud/schema/health.ts.
import type { BootReason, CrashKind, UpdateStep } from './health-definitions.ts';

interface ReportCommon {
  /** The board's report counter: stored once per (uuid, seq). */
  seq: number;
  /** When the board made it (ISO 8601 UTC), or null before its clock was set. */
  at: string | null;
  /** The board's uptime in seconds when it made it. */
  up: number;
  /** The running firmware's version. */
  fw: string;
}

export interface BootReport extends ReportCommon {
  kind: 'boot';
  reason: BootReason;
  by?: string | undefined;
  crash?: { kind: CrashKind; message: string; where?: string | undefined } | undefined;
  slot: string;
  ota: string;
  rolled_back?: { slot: string; version: string } | undefined;
  sv: number;
  boots: number;
  /** Reports the board dropped (refused with 400 or 413) since its flash was erased. */
  dropped?: number | undefined;
}

export interface HeartbeatReport extends ReportCommon {
  kind: 'heartbeat';
  chunk: number;
  chunk_peak: number;
  slots: number;
  slots_peak: number;
  block: number;
  heap_min: number;
  rssi: number | null;
  reboots: number;
  ota: string;
  /** Reports the board dropped (refused with 400 or 413) since its flash was erased. */
  dropped?: number | undefined;
}

export interface UpdateReport extends ReportCommon {
  kind: 'update';
  version: string;
  outcome: UpdateStep;
  reason?: string | undefined;
  detail?: string | undefined;
}

/** One report as the board sent it (the wire format's field names). */
export type HealthReport = BootReport | HeartbeatReport | UpdateReport;
