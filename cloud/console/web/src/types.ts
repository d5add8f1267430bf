// The shapes of the answers the console reads: the API's own declarations (cloud/schema/api.ts),
// as types only (nothing of the cloud is bundled into the page).
import type { Static } from '@sinclair/typebox';
import type {
  AuditList,
  ConsoleSession,
  Device as DeviceShape,
  FunctionConfig as FunctionConfigShape,
  Release as ReleaseShape,
  Rollout as RolloutShape,
  TrackList,
} from '../../../schema/api.ts';

export type Session = Static<typeof ConsoleSession>;
export type Track = Static<typeof TrackList>['tracks'][number];
export type Rollout = Static<typeof RolloutShape>;
export type Release = Static<typeof ReleaseShape>;
export type Device = Static<typeof DeviceShape> & { groups: string[] };
export type FunctionConfig = Static<typeof FunctionConfigShape>;
export type AuditEntry = Static<typeof AuditList>['entries'][number];
