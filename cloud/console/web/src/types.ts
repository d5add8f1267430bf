// The shapes of the answers the console reads: the API's own declarations (cloud/schema/api.ts,
// cloud/schema/health.ts), as types only (nothing of the cloud is bundled into the page).
import type { Static } from '@sinclair/typebox';
import type {
  AuditList,
  ConsoleSession,
  Device as DeviceShape,
  DeviceVersions as DeviceVersionsShape,
  FunctionConfig as FunctionConfigShape,
  Release as ReleaseShape,
  Rollout as RolloutShape,
  RolloutDeviceList,
  TrackList,
  TrackSigning as TrackSigningShape,
} from '../../../schema/api.ts';
import type { DeviceHealthTimeline, FleetHealth as FleetHealthShape, ReleaseHealth as ReleaseHealthShape, ReleaseHealthFigures } from '../../../schema/health.ts';
import type { HealthReport, HeartbeatReport } from '../../../health-reports.ts';

export type Session = Static<typeof ConsoleSession>;
export type Track = Static<typeof TrackList>['tracks'][number];
export type Rollout = Static<typeof RolloutShape>;
export type Release = Static<typeof ReleaseShape>;
export type Device = Static<typeof DeviceShape> & { groups: string[] };
export type FunctionConfig = Static<typeof FunctionConfigShape>;
export type AuditEntry = Static<typeof AuditList>['entries'][number];
export type OutcomeDevices = Static<typeof RolloutDeviceList>;
export type TrackSigning = Static<typeof TrackSigningShape>;
export type DeviceVersions = Static<typeof DeviceVersionsShape>;
/**
 * A device's timeline. Its reports are typed by the cloud's report interfaces (cloud/health-reports.ts),
 * as the CLI's are: the TypeBox shapes of the reports are built by a helper that takes its fields as a
 * record, so their Static type keeps only the common fields.
 */
export type Timeline = Omit<Static<typeof DeviceHealthTimeline>, 'reports'> & { reports: TimelineEntry[] };
export type TimelineEntry = Omit<Static<typeof DeviceHealthTimeline>['reports'][number], 'report'> & { report: HealthReport };
export type HealthDay = Timeline['days'][number];
export type DeviceHealthState = NonNullable<Timeline['health']>;
export type Heartbeat = HeartbeatReport;
export type FleetHealth = Static<typeof FleetHealthShape>;
export type ReleaseFigures = Static<typeof ReleaseHealthFigures>;
export type ReleaseHealth = Static<typeof ReleaseHealthShape>;
