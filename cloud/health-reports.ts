// The three reports a board sends (docs/device-health.md, the wire format), as types: the store keeps
// them as sent, the admin API answers them in a device's timeline, the CLI and the console print them.
// Types only (their import is erased), so the console's page (DOM types, no Node) can read them.
// Their schemas, which the ingest route checks, are cloud/schema/health.ts.
import type { BootReport as BoardBootReport, HeartbeatReport as BoardHeartbeatReport, UpdateReport } from '../firmware/src/core/health/reports.ts';

// The wire format is the firmware's (firmware/src/core/health/reports.ts): one declaration of what a
// board sends. The cloud also keeps reports of boards from before `dropped` was sent.
type DroppedOptional<T extends { dropped: number }> = Omit<T, 'dropped'> & {
  /** Reports the board dropped (refused with 400 or 413) since its flash was erased; absent from older boards. */
  dropped?: number | undefined;
};

export type BootReport = DroppedOptional<BoardBootReport>;
export type HeartbeatReport = DroppedOptional<BoardHeartbeatReport>;
export type { UpdateReport };

/** One report as the board sent it (the wire format's field names). */
export type HealthReport = BootReport | HeartbeatReport | UpdateReport;
