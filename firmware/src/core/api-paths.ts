// The device-local API's paths (spec 4.2; docs/firmware-api.md), spelled once: the route table that
// serves them (api.ts), the controller-provisioning target that calls its source (provisioning/
// target.ts), and every program that calls a board (the configurator, the harness, the tools) take
// them from here. Constants and three string builders only: preloaded, the module lies in flash and
// costs a board's heaps nothing.
import type { RecordKind } from './records.ts';

export const API_PATHS = Object.freeze({
  login: '/api/login',
  status: '/api/status',
  events: '/api/events',
  backup: '/backup',
  cloud: '/api/cloud',
  cloudBackup: '/api/cloud-backup',
  cloudBackupInfo: '/api/cloud-backup/info',
  provisioning: '/api/provisioning',
  provisioningToken: '/api/provisioning/token',
});

/** /api/controllers or /api/clients: the list of one kind's records. */
export function recordsPath(kind: RecordKind): string {
  return `/api/${kind}`;
}

/** /api/{kind}/{uuid} as a route table writes it, `{uuid}` the parameter (http/router.ts). */
export function recordPattern(kind: RecordKind): string {
  return `${recordsPath(kind)}/{uuid}`;
}

/** /api/{kind}/{uuid}: one record, the UUID percent-encoded as a path segment. */
export function recordPath(kind: RecordKind, uuid: string): string {
  return `${recordsPath(kind)}/${encodeURIComponent(uuid)}`;
}
