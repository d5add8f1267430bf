// What the device-local API answers, as the configurator judges a controller's answer
// (docs/firmware-api.md; firmware/src/core/api.ts): its errors are the device's catalog
// (firmware/src/core/errors.ts, each code with its statuses), and a success carries what its route
// answers. Anything else is the controller's fault, said as such (controller-link.ts), and never
// passed on as the configurator's own answer.
import { DEVICE_ERRORS, type DeviceErrorCode } from '../../firmware/src/core/errors.ts';

/** The statuses the device's catalog gives an error code; undefined for a code it does not have. */
export function deviceErrorStatuses(code: string): readonly number[] | undefined {
  return Object.hasOwn(DEVICE_ERRORS, code) ? DEVICE_ERRORS[code as DeviceErrorCode] : undefined;
}

/** What a route's success (200, 201) carries, in words for the message when it does not. */
export interface AnswerShape {
  readonly what: string;
  test(value: unknown): boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** `key` absent, or of type `type`. */
const optional = (o: Record<string, unknown>, key: string, type: 'string' | 'number') => o[key] === undefined || typeof o[key] === type;

export const ANSWERS = {
  /** /api/status, PUT /backup, a record. */
  object: { what: 'a JSON object', test: isObject },
  /** GET /api/controllers, GET /api/clients. */
  uuids: { what: 'a JSON list of UUIDs', test: (v) => Array.isArray(v) && v.every((u) => typeof u === 'string') },
  /** PUT and GET /api/provisioning (provisioning/mode.ts ModeStatus). */
  mode: {
    what: 'the provisioning mode {"active", "state", …}',
    test: (v) =>
      isObject(v) &&
      typeof v.active === 'boolean' &&
      typeof v.state === 'string' &&
      ['ssid', 'password', 'bssid', 'last_stop_reason'].every((k) => optional(v, k, 'string')) &&
      ['expires_in', 'allowlist_size'].every((k) => optional(v, k, 'number')),
  },
  /** GET /api/events. */
  events: {
    what: '{"events": [{"time", "level", "source", "message"}, …]}',
    test: (v) => isObject(v) && Array.isArray(v.events) && v.events.every((e) => isObject(e) && typeof e.time === 'number' && ['level', 'source', 'message'].every((k) => typeof e[k] === 'string')),
  },
  /** GET and PUT /api/cloud. */
  cloud: { what: '{"url": a URL or null}', test: (v) => isObject(v) && (v.url === null || typeof v.url === 'string') },
  /** GET /api/cloud-backup/info (cloud/backup-client.ts info). */
  cloudInfo: {
    what: '{"stored": false} or {"stored": true, "etag", "last_backup_date", "same_as_local"}',
    test: (v) =>
      isObject(v) &&
      (v.stored === false ||
        (v.stored === true && (v.etag === null || typeof v.etag === 'string') && (v.last_backup_date === null || typeof v.last_backup_date === 'string') && typeof v.same_as_local === 'boolean')),
  },
  /** POST /api/cloud-backup (cloud/backup-client.ts push). */
  cloudPush: { what: '{"result", "etag"?, "last_backup_date"?}', test: (v) => isObject(v) && typeof v.result === 'string' && optional(v, 'etag', 'string') && optional(v, 'last_backup_date', 'string') },
} as const satisfies Record<string, AnswerShape>;
