// The page's only way to its server: same origin, JSON, and the header that tells the server the
// request comes from the page itself (web-common/request-guard.ts). Errors carry the server's code
// and message, which the page shows as they are.
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

async function request<T>(method: string, path: string, body?: unknown, raw?: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`/api${path}`, {
      method,
      headers: { ...PAGE_HEADER, ...(body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
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
  if (!res.ok) throw new ApiError(res.status, json?.error ?? 'http_error', json?.message ?? `The configurator answered ${res.status}`, json?.details ?? {});
  return json as T;
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
  saveClientSettings: (s: unknown) => request<ClientSettings>('PUT', '/site/client-settings', s),
  addController: (c: { name: string; address: string; hardware_class: string }) => request<Controller>('POST', '/controllers', c),
  controller: (id: number) => request<Controller>('GET', c(id)),
  updateController: (id: number, v: { name: string; address: string; hardware_class: string }) => request<Controller>('PUT', c(id), v),
  removeController: (id: number) => request<void>('DELETE', c(id)),
  configuration: (id: number) => request<StoredConfigurationView>('GET', `${c(id)}/configuration`),
  saveConfiguration: (id: number, text: string) => request<StoredConfigurationView>('PUT', `${c(id)}/configuration`, undefined, text),
  exportText: async (id: number) => {
    const res = await fetch(`/api${c(id)}/export`, { headers: PAGE_HEADER });
    if (!res.ok) throw new ApiError(res.status, 'export_failed', `The export failed (${res.status})`);
    return { blob: await res.blob(), name: /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'backup.json' };
  },
  records: (id: number) => request<{ records: RecordSummary[] }>('GET', `${c(id)}/records`),
  addRecord: (id: number, r: { kind: string; uuid: string; name: string; mac: string }) => request<{ record: RecordSummary; on_controller: boolean; problem: string | null }>('POST', `${c(id)}/records`, r),
  removeRecord: (id: number, kind: string, uuid: string) => request<void>('DELETE', `${c(id)}/records/${kind}/${encodeURIComponent(uuid)}`),
  login: (id: number, password: string) => request<{ expires_in: number }>('POST', `${c(id)}/login`, { password }),
  logout: (id: number) => request<void>('POST', `${c(id)}/logout`),
  state: (id: number) => request<ControllerState>('GET', `${c(id)}/state`),
  deploy: (id: number) => request<{ etag: string; size: number; records_written: number; state: ControllerState }>('POST', `${c(id)}/deploy`),
  pull: (id: number) => request<{ etag: string; records: number; canonical: boolean; state: ControllerState }>('POST', `${c(id)}/pull`),
  provisioning: (id: number) => request<ProvisioningView>('GET', `${c(id)}/provisioning`),
  enableProvisioning: (id: number) => request<ProvisioningView>('PUT', `${c(id)}/provisioning`),
  disableProvisioning: (id: number) => request<void>('DELETE', `${c(id)}/provisioning`),
  events: (id: number) => request<{ events: DeviceEvent[] }>('GET', `${c(id)}/events`),
  deviceRecords: (id: number) => request<{ records: DeviceRecord[] }>('GET', `${c(id)}/device-records`),
  cloud: (id: number) => request<{ url: string | null }>('GET', `${c(id)}/cloud`),
  setCloud: (id: number, url: string) => request<{ url: string | null }>('PUT', `${c(id)}/cloud`, { url }),
  pushCloud: (id: number) => request<{ result: string; etag?: string; last_backup_date?: string }>('POST', `${c(id)}/cloud-backup`),
  retrieveCloud: (id: number) => request<{ etag: string | null; size: number; state: ControllerState }>('POST', `${c(id)}/cloud-backup/retrieve`),
  deleteCloud: (id: number) => request<void>('DELETE', `${c(id)}/cloud-backup`),
};
