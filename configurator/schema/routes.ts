// The configurator's API as data, as the cloud's cloud/schema/routes.ts: each route's method and path
// (under /api), the status it answers on success, the body it takes and the answer it gives, as
// TypeBox shapes. The server registers its handlers from this table and refuses a body that does not
// fit (server/handlers.ts); the page's client is made from it and takes its types from it
// (web/src/api.ts). The page's own server is the only caller (docs/configurator-security.md).
//
// TypeBox is imported as a namespace so that the page's bundle takes only the builders used here.
import * as Type from '@sinclair/typebox';
import { EXPECTED } from '../../cloud/schema/annotations.ts';
import { UUID_PATTERN, UUID_RULE } from '../../firmware/src/core/ids.ts';
import { ConfigurationSchema } from './controller-configuration.ts';

const RecordKind = Type.Union([Type.Literal('controllers'), Type.Literal('clients')], { [EXPECTED]: '"clients" or "controllers"' });
const Nullable = <T extends Type.TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** A controller of the site: where its device-local API is, and its hardware class. */
export const Controller = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  address: Type.String(),
  hardware_class: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

/** A controller as the page adds or edits it (the name is trimmed; the address is the API's origin). */
export const ControllerInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '\\S', [EXPECTED]: '1 to 64 characters' }),
    hardware_class: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', [EXPECTED]: '1 to 64 of A-Z a-z 0-9 . _ -, such as ctl-s3' })),
    address: Type.String({ minLength: 1, pattern: '\\S', [EXPECTED]: "the controller's address, such as http://192.168.1.20" }),
  },
  { [EXPECTED]: 'A controller is a JSON object with name, address and hardware_class' },
);

/** What every client record the site hands out carries (spec 2.6: Wi-Fi, MQTT, a CA certificate). */
const clientSettings = <T extends Type.TSchema>(tls: T) =>
  Type.Object(
    {
      wifi: Type.Object({ ssid: Type.String(), password: Type.String({ writeOnly: true }) }),
      mqtt: Type.Object({ host: Type.String(), port: Type.Integer(), tls, username: Type.Optional(Type.String()), password: Type.Optional(Type.String({ writeOnly: true })) }),
      ca_certificate: Type.String(),
    },
    { additionalProperties: false, [EXPECTED]: 'The client settings are a JSON object with wifi, mqtt and ca_certificate' },
  );
/** As the site keeps them. */
export const ClientSettings = clientSettings(Type.Boolean());
/** As the page sends them: TLS on unless said. */
const ClientSettingsInput = clientSettings(Type.Optional(Type.Boolean()));

/** A broker as the pages show it: host:port. */
export const brokerAddress = (mqtt: { host: string; port: number }) => `${mqtt.host}:${mqtt.port}`;

/** What a record is to the page: never its Wi-Fi or MQTT secrets. */
export const RecordSummary = Type.Object({ kind: RecordKind, uuid: Type.String(), name: Type.String(), mac: Type.String() });

/** A client or a target controller registered from the page, by its UUID and MAC. */
export const RecordRequest = Type.Object(
  {
    kind: RecordKind,
    uuid: Type.String({ pattern: UUID_PATTERN, [EXPECTED]: UUID_RULE }),
    name: Type.Optional(Type.String({ maxLength: 64, [EXPECTED]: 'at most 64 characters' })),
    mac: Type.String({ [EXPECTED]: 'a MAC address such as 24:0A:C4:10:00:21' }),
  },
  { [EXPECTED]: 'A record is a JSON object with kind, uuid, name and mac' },
);

/** What the controllers page shows for one controller. */
export const ControllerState = Type.Object({
  id: Type.Integer(),
  reachable: Type.Boolean(),
  logged_in: Type.Boolean(),
  /** Why it is not reachable, or what it answered that is not usable. */
  problem: Nullable(Type.String()),
  firmware_version: Nullable(Type.String()),
  uuid: Nullable(Type.String()),
  /** The SHA-256 of the site's export for it. */
  site_etag: Type.String(),
  /** HEAD /backup's ETag; null when it has no backup or was not read. */
  device_etag: Nullable(Type.String()),
  /** in_sync, deployment_required, no_backup (HEAD 404), or unknown (not logged in / not reachable). */
  backup: Type.Union([Type.Literal('in_sync'), Type.Literal('deployment_required'), Type.Literal('no_backup'), Type.Literal('unknown')]),
  /** Site records the controller lacks, and records it has that the site does not. */
  records: Nullable(Type.Object({ missing_on_controller: Type.Array(Type.String()), only_on_controller: Type.Array(Type.String()) })),
  deployment_required: Type.Boolean(),
  provisioning: Nullable(Type.Object({ active: Type.Boolean(), expires_in: Type.Optional(Type.Number()) })),
  cloud: Nullable(Type.String()),
});

/** A controller's provisioning mode, or why it last stopped (docs/firmware-api.md). */
export const Provisioning = Type.Object({
  active: Type.Optional(Type.Boolean()),
  state: Type.Optional(Type.String()),
  ssid: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
  bssid: Type.Optional(Type.String()),
  expires_in: Type.Optional(Type.Number()),
  allowlist_size: Type.Optional(Type.Number()),
  last_stop_reason: Type.Optional(Nullable(Type.String())),
});

export const DeviceEvent = Type.Object({ time: Type.Number(), level: Type.String(), source: Type.String(), message: Type.String() });

/**
 * The site's clients of one controller, each as far as it is known (docs/configurator-clients.md):
 * when the controller last issued it a provisioning token (its event log), and what the client itself
 * last said on the site's MQTT broker (its retained status).
 */
export const ClientReport = Type.Object({
  uuid: Type.String(),
  name: Type.String(),
  mac: Type.String(),
  /** ISO 8601; null when this configurator never saw the controller log it. */
  provisioned_at: Nullable(Type.String()),
  /** online / offline: the client's retained status; not_seen: nothing on the broker; unknown: the broker was not read. */
  mqtt: Type.Union([Type.Literal('online'), Type.Literal('offline'), Type.Literal('not_seen'), Type.Literal('unknown')]),
  /** The firmware version its online status named. */
  version: Nullable(Type.String()),
});
export const ClientsReport = Type.Object({
  clients: Type.Array(ClientReport),
  /** host:port of the site's broker (Client settings); null without client settings. */
  broker: Nullable(Type.String()),
  /** Why the broker, or the controller's log, could not be read. */
  problems: Type.Array(Type.String()),
});

/** What the cloud holds for a controller, as the controller asked it (GET /api/cloud-backup/info). */
export const CloudBackupInfo = Type.Object({
  stored: Type.Boolean(),
  etag: Nullable(Type.String()),
  last_backup_date: Nullable(Type.String()),
  /** The cloud's ETag against the controller's /backup.json and against this site's export. */
  same_as_controller: Type.Boolean(),
  same_as_site: Type.Boolean(),
});

const StoredConfiguration = Type.Object({ configuration: ConfigurationSchema, etag: Type.String(), size: Type.Integer(), limit: Type.Integer() });
const CloudUrl = Type.Object({ url: Nullable(Type.String()) });
const Records = Type.Object({ records: Type.Array(RecordSummary) });

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Success = 200 | 201 | 204;

export interface RouteSpec {
  method: Method;
  /** Under /api, in Express's form: `:id` a controller's id, `:kind` and `:uuid` a record's. */
  path: string;
  /** The status of a success; any other answer is an error to the page. */
  success: Success;
  /** The JSON body it takes, checked before the route runs. */
  body?: Type.TSchema;
  /** The code of a body that does not fit (invalid_body when not said). */
  bodyError?: 'invalid_controller' | 'invalid_record' | 'invalid_settings';
  /** The body is a document sent as it is (a configuration: checked whole by the server). */
  document?: true;
  /** The answer is a file to download. */
  file?: true;
  /** The JSON answer; none for a 204. */
  answer?: Type.TSchema;
}

const deviceState = <P extends Type.TProperties>(properties: P) => Type.Object({ ...properties, state: ControllerState });

export const ROUTES = {
  site: { method: 'GET', path: '/site', success: 200, answer: Type.Object({ path: Type.String(), controllers: Type.Array(Controller), client_settings: Nullable(ClientSettings) }) },
  saveClientSettings: { method: 'PUT', path: '/site/client-settings', success: 200, body: ClientSettingsInput, bodyError: 'invalid_settings', answer: ClientSettings },

  addController: { method: 'POST', path: '/controllers', success: 201, body: ControllerInput, bodyError: 'invalid_controller', answer: Controller },
  controller: { method: 'GET', path: '/controllers/:id', success: 200, answer: Controller },
  updateController: { method: 'PUT', path: '/controllers/:id', success: 200, body: ControllerInput, bodyError: 'invalid_controller', answer: Controller },
  removeController: { method: 'DELETE', path: '/controllers/:id', success: 204 },

  configuration: { method: 'GET', path: '/controllers/:id/configuration', success: 200, answer: StoredConfiguration },
  saveConfiguration: { method: 'PUT', path: '/controllers/:id/configuration', success: 200, document: true, answer: StoredConfiguration },
  exportConfiguration: { method: 'GET', path: '/controllers/:id/export', success: 200, file: true },

  records: { method: 'GET', path: '/controllers/:id/records', success: 200, answer: Records },
  addRecord: {
    method: 'POST',
    path: '/controllers/:id/records',
    success: 201,
    body: RecordRequest,
    bodyError: 'invalid_record',
    answer: Type.Object({ record: RecordSummary, on_controller: Type.Boolean(), problem: Nullable(Type.String()), mac_field: Type.Union([Type.Literal('ethernet_mac'), Type.Literal('mac')]) }),
  },
  removeRecord: { method: 'DELETE', path: '/controllers/:id/records/:kind/:uuid', success: 204 },

  // The controller, through this server (docs/configurator-controller-access.md).
  login: {
    method: 'POST',
    path: '/controllers/:id/login',
    success: 200,
    body: Type.Object(
      { password: Type.String({ minLength: 1, maxLength: 128, writeOnly: true, [EXPECTED]: "the controller's admin password (1 to 128 characters)" }) },
      { [EXPECTED]: 'A log-in is a JSON object with the password' },
    ),
    answer: Type.Object({ expires_in: Type.Number() }),
  },
  logout: { method: 'POST', path: '/controllers/:id/logout', success: 204 },
  state: { method: 'GET', path: '/controllers/:id/state', success: 200, answer: ControllerState },
  deploy: { method: 'POST', path: '/controllers/:id/deploy', success: 200, answer: deviceState({ etag: Type.String(), size: Type.Integer(), records_written: Type.Integer() }) },
  pull: { method: 'POST', path: '/controllers/:id/pull', success: 200, answer: deviceState({ etag: Type.String(), records: Type.Integer(), canonical: Type.Boolean() }) },

  enableProvisioning: { method: 'PUT', path: '/controllers/:id/provisioning', success: 200, answer: Provisioning },
  provisioning: { method: 'GET', path: '/controllers/:id/provisioning', success: 200, answer: Provisioning },
  disableProvisioning: { method: 'DELETE', path: '/controllers/:id/provisioning', success: 204 },
  events: { method: 'GET', path: '/controllers/:id/events', success: 200, answer: Type.Object({ events: Type.Array(DeviceEvent) }) },
  deviceRecords: { method: 'GET', path: '/controllers/:id/device-records', success: 200, answer: Records },
  clients: { method: 'GET', path: '/controllers/:id/clients', success: 200, answer: ClientsReport },

  cloud: { method: 'GET', path: '/controllers/:id/cloud', success: 200, answer: CloudUrl },
  setCloud: { method: 'PUT', path: '/controllers/:id/cloud', success: 200, body: CloudUrl, answer: CloudUrl },
  cloudBackup: { method: 'GET', path: '/controllers/:id/cloud-backup', success: 200, answer: CloudBackupInfo },
  pushCloud: {
    method: 'POST',
    path: '/controllers/:id/cloud-backup',
    success: 200,
    answer: Type.Object({ result: Type.String(), etag: Type.Optional(Type.String()), last_backup_date: Type.Optional(Type.String()) }),
  },
  // Retrieve changes the controller (it writes /backup.json): a POST, so that a GET stays safe.
  retrieveCloud: { method: 'POST', path: '/controllers/:id/cloud-backup/retrieve', success: 200, answer: deviceState({ etag: Nullable(Type.String()), size: Type.Integer() }) },
  deleteCloud: { method: 'DELETE', path: '/controllers/:id/cloud-backup', success: 204 },
} as const satisfies Record<string, RouteSpec>;

export type Routes = typeof ROUTES;
export type RouteName = keyof Routes;

/** What a route's path parameters are. */
interface ParamTypes {
  id: number;
  kind: Type.Static<typeof RecordKind>;
  uuid: string;
}
type ParamNames<P extends string> = P extends `${string}:${infer N}/${infer Rest}` ? N | ParamNames<Rest> : P extends `${string}:${infer N}` ? N : never;
export type Params<K extends RouteName> = { [N in ParamNames<Routes[K]['path']> & keyof ParamTypes]: ParamTypes[N] };

/** A route's JSON body, when it takes one. */
export type Body<K extends RouteName> = Routes[K] extends { body: infer S extends Type.TSchema } ? Type.Static<S> : never;

/** What a route answers on success: its JSON, a downloaded file, or nothing. */
export type Answer<K extends RouteName> = Routes[K] extends { answer: infer S extends Type.TSchema } ? Type.Static<S> : Routes[K] extends { file: true } ? { blob: Blob; name: string } : void;

export type Controller = Type.Static<typeof Controller>;
export type ControllerInput = Type.Static<typeof ControllerInput>;
export type ClientSettings = Type.Static<typeof ClientSettings>;
export type ClientSettingsInput = Type.Static<typeof ClientSettingsInput>;
export type RecordSummary = Type.Static<typeof RecordSummary>;
export type ControllerState = Type.Static<typeof ControllerState>;
export type Provisioning = Type.Static<typeof Provisioning>;
export type DeviceEvent = Type.Static<typeof DeviceEvent>;
export type ClientReport = Type.Static<typeof ClientReport>;
export type ClientsReport = Type.Static<typeof ClientsReport>;
export type CloudBackupInfo = Type.Static<typeof CloudBackupInfo>;
