// The page's only way to its server: same origin, JSON, and the header that tells the server the
// request comes from the page itself (web-common/request-guard.ts). Each call names the status its
// route answers on success (200, 201 for a creation, 204 for no content): any other answer, a 2xx
// included, is an error, never a success. Errors carry the server's code and message, which the
// page shows as they are.
import type { Configuration } from '../../server/configuration.ts';
import type { ControllerState } from '../../server/device-ops.ts';
import type { ClientSettings, Controller, RecordSummary } from '../../server/site-store.ts';

export type { ClientSettings, Configuration, Controller, ControllerState, RecordSummary };

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const PAGE_HEADER = { 'x-fleet-page': '1' };

/** The status a route answers on success. */
type Success = 200 | 201 | 204;

async function request<T>(method: string, path: string, o: { body?: unknown; raw?: string; success?: Success } = {}): Promise<T> {
  const success = o.success ?? 200;
  let res: Response;
  try {
    res = await fetch(`/api${path}`, {
      method,
      headers: { ...PAGE_HEADER, ...(o.body !== undefined || o.raw !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body)),
      credentials: 'same-origin',
    });
  } catch {
    throw new ApiError(0, 'configurator_unreachable', 'The configurator does not answer: is `fleet configurator` still running?');
  }
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  const said = typeof json?.error === 'string' && typeof json?.message === 'string';
  if (res.status === success && (success === 204 || (json !== undefined && !said))) return json as T;
  // An error of the configurator's API: its code and message as they are.
  if (res.status >= 400 && said) throw new ApiError(res.status, json.error, json.message, json.details ?? {});
  const what = said ? ` (${json.error}: ${json.message})` : json === undefined && res.status !== 204 ? ' without JSON' : '';
  throw new ApiError(res.status, 'unexpected_answer', `The configurator answered ${method} /api${path} with status ${res.status}${what}, not the ${success} expected: nothing was taken from it`, { status: res.status });
}

export interface SiteView {
  path: string;
  controllers: Controller[];
  client_settings: ClientSettings | null;
}
export interface StoredConfigurationView {
  configuration: Configuration;
  etag: string;
  size: number;
  limit: number;
}
export interface ProvisioningView {
  active?: boolean;
  state?: string;
  ssid?: string;
  password?: string;
  bssid?: string;
  expires_in?: number;
  allowlist_size?: number;
  last_stop_reason?: string | null;
}
export interface DeviceEvent {
  time: number;
  level: string;
  source: string;
  message: string;
}
export interface DeviceRecord {
  kind: 'clients' | 'controllers';
  uuid: string;
  name: string;
  mac: string;
}

const c = (id: number) => `/controllers/${id}`;

export const api = {
  site: () => request<SiteView>('GET', '/site'),
  saveClientSettings: (s: unknown) => request<ClientSettings>('PUT', '/site/client-settings', { body: s }),
  addController: (c: { name: string; address: string; hardware_class: string }) => request<Controller>('POST', '/controllers', { body: c, success: 201 }),
  controller: (id: number) => request<Controller>('GET', c(id)),
  updateController: (id: number, v: { name: string; address: string; hardware_class: string }) => request<Controller>('PUT', c(id), { body: v }),
  removeController: (id: number) => request<void>('DELETE', c(id), { success: 204 }),
  configuration: (id: number) => request<StoredConfigurationView>('GET', `${c(id)}/configuration`),
  saveConfiguration: (id: number, text: string) => request<StoredConfigurationView>('PUT', `${c(id)}/configuration`, { raw: text }),
  exportText: async (id: number) => {
    const res = await fetch(`/api${c(id)}/export`, { headers: PAGE_HEADER });
    if (res.status !== 200) throw new ApiError(res.status, 'export_failed', `The export failed (${res.status})`);
    return { blob: await res.blob(), name: /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'backup.json' };
  },
  records: (id: number) => request<{ records: RecordSummary[] }>('GET', `${c(id)}/records`),
  addRecord: (id: number, r: { kind: string; uuid: string; name: string; mac: string }) => request<{ record: RecordSummary; on_controller: boolean; problem: string | null }>('POST', `${c(id)}/records`, { body: r, success: 201 }),
  removeRecord: (id: number, kind: string, uuid: string) => request<void>('DELETE', `${c(id)}/records/${kind}/${encodeURIComponent(uuid)}`, { success: 204 }),
  login: (id: number, password: string) => request<{ expires_in: number }>('POST', `${c(id)}/login`, { body: { password } }),
  logout: (id: number) => request<void>('POST', `${c(id)}/logout`, { success: 204 }),
  state: (id: number) => request<ControllerState>('GET', `${c(id)}/state`),
  deploy: (id: number) => request<{ etag: string; size: number; records_written: number; state: ControllerState }>('POST', `${c(id)}/deploy`),
  pull: (id: number) => request<{ etag: string; records: number; canonical: boolean; state: ControllerState }>('POST', `${c(id)}/pull`),
  provisioning: (id: number) => request<ProvisioningView>('GET', `${c(id)}/provisioning`),
  enableProvisioning: (id: number) => request<ProvisioningView>('PUT', `${c(id)}/provisioning`),
  disableProvisioning: (id: number) => request<void>('DELETE', `${c(id)}/provisioning`, { success: 204 }),
  events: (id: number) => request<{ events: DeviceEvent[] }>('GET', `${c(id)}/events`),
  deviceRecords: (id: number) => request<{ records: DeviceRecord[] }>('GET', `${c(id)}/device-records`),
  cloud: (id: number) => request<{ url: string | null }>('GET', `${c(id)}/cloud`),
  setCloud: (id: number, url: string) => request<{ url: string | null }>('PUT', `${c(id)}/cloud`, { body: { url } }),
  pushCloud: (id: number) => request<{ result: string; etag?: string; last_backup_date?: string }>('POST', `${c(id)}/cloud-backup`),
  retrieveCloud: (id: number) => request<{ etag: string | null; size: number; state: ControllerState }>('POST', `${c(id)}/cloud-backup/retrieve`),
  deleteCloud: (id: number) => request<void>('DELETE', `${c(id)}/cloud-backup`, { success: 204 }),
};
