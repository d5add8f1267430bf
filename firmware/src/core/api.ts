// The device-local HTTP API (spec 4.2, 5, 7; DESIGN.md section 5), framework-free: request in,
// response out, bodies as chunk streams.
import type { HttpRequest, HttpResponse } from '../hal/network.ts';
import type { FailureThrottle } from './auth/failure-throttle.ts';
import type { VisualTokens } from './auth/visual-token.ts';
import type { LocalBackupStore } from './backup/local-store.ts';
import type { CloudBackupClient } from './cloud/backup-client.ts';
import { API_PATHS, recordPattern, recordsPath } from './api-paths.ts';
import { readCloudConfig, writeCloudConfig } from './cloud/config.ts';
import { utf8Encode } from './bytes.ts';
import { clientConfigurationProblem } from './client-configuration.ts';
import { DeviceError, errors } from './errors.ts';
import { drain } from './body.ts';
import { ifNoneMatches, quoteEtag } from './http/etag.ts';
import { emptyResponse, errorResponse, jsonResponse, readJsonBody } from './http/respond.ts';
import { REQUEST_MEMORY_BYTES, RequestBudget } from './http/request-memory.ts';
import { matchRoute, type Route } from './http/router.ts';
import { isUuid, normalizeMac, UUID_RULE } from './ids.ts';
import type { ProvisioningMode } from './provisioning/mode.ts';
import { tokenIssuedMessage, type ProvisioningToken, type ProvisioningTokens } from './provisioning/tokens.ts';
import { MAC_FIELD, type RecordKind, type RecordStore } from './records.ts';
import type { FirmwareSettings } from './settings.ts';


export interface ApiServices {
  settings: FirmwareSettings;
  visual: VisualTokens;
  local: LocalBackupStore;
  cloud: CloudBackupClient;
  records: RecordStore;
  mode: ProvisioningMode;
  tokens: ProvisioningTokens;
  storage: import('../hal/storage.ts').Storage;
  status: () => Record<string, unknown>;
  /** The newest event-log entries, oldest first (hal/output.ts EventLog.recent). */
  events: (count: number) => { time: number; level: string; source: string; message: string }[];
  log: (level: 'info' | 'warning' | 'error', message: string) => void;
  /** Called after a configuration write through the API (a record, the backup, a cloud retrieve). */
  configuredLocally?: () => void;
}

/** Who may call a route. */
type Access = 'visual' | 'visual-or-provisioning' | 'open';

/**
 * GET /api/events answers this many of the newest event-log entries: what the configurator shows
 * while it watches a provisioning (docs/configurator-controller-access.md). 16 entries of at most
 * 240 characters keep the answer under 5 KB of the chunk heap.
 */
export const API_EVENTS_COUNT = 16;

/** A route's handler: called with the API, the request, the path's params and the caller's token. */
type RouteRun = (api: DeviceApi, req: HttpRequest, params: Record<string, string>, token: ProvisioningToken | null) => Promise<HttpResponse>;

interface ApiRoute extends Route {
  readonly access: Access;
  readonly run: RouteRun;
}

function route(method: string, pattern: string, access: Access, run: RouteRun): ApiRoute {
  return Object.freeze({ method, pattern, access, run });
}

export class DeviceApi {
  /**
   * The routes, in match order (a 405 lists the allowed methods in this order). One static table,
   * not per-instance closures: built when the module loads, it is in flash on a device (preloaded)
   * and costs the slot heap nothing (docs/firmware-bench.md).
   */
  private static readonly routes: readonly ApiRoute[] = Object.freeze([
    // Throttled (docs/firmware-login-throttle.md): during a back-off the password is not even checked.
    route('POST', API_PATHS.login, 'open', async (api, req) =>
      api.throttled(api.s.visual.throttle, [401], req, async () => jsonResponse(200, api.s.visual.login((await readJsonBody(req.body, 1024, api.memory) as { password?: unknown } | null)?.password))),
    ),
    route('GET', API_PATHS.status, 'visual', async (api) => jsonResponse(200, api.s.status())),
    route('GET', API_PATHS.events, 'visual', async (api) => jsonResponse(200, { events: api.s.events(API_EVENTS_COUNT) })),

    route('HEAD', API_PATHS.backup, 'visual-or-provisioning', async (api, req, _p, t) => api.getBackup(req, t, false)),
    route('GET', API_PATHS.backup, 'visual-or-provisioning', async (api, req, _p, t) => api.getBackup(req, t, true)),
    route('PUT', API_PATHS.backup, 'visual', async (api, req) => {
      const s = api.s;
      const declared = Number(req.headers['content-length']);
      if (declared > s.settings.maxLocalBackupBytes) {
        await drain(req.body);
        throw errors.tooLarge(s.settings.maxLocalBackupBytes);
      }
      const { etag, size } = await s.local.write(req.body);
      s.configuredLocally?.();
      return jsonResponse(200, { etag, size }, { etag: quoteEtag(etag) });
    }),
    route('DELETE', API_PATHS.backup, 'visual', async (api) => {
      if (!api.s.local.remove()) throw errors.notFound('no_backup', 'No backup exists');
      return emptyResponse(204);
    }),

    route('POST', API_PATHS.cloudBackup, 'visual', async (api) => jsonResponse(200, await api.s.cloud.push())),
    route('GET', API_PATHS.cloudBackup, 'visual', async (api) => {
      const { etag, size } = await api.s.cloud.retrieve();
      api.s.configuredLocally?.();
      return { status: 200, headers: { 'content-type': 'application/json', 'content-length': String(size), etag: quoteEtag(etag) }, body: api.s.local.reader() };
    }),
    route('GET', API_PATHS.cloudBackupInfo, 'visual', async (api) => jsonResponse(200, await api.s.cloud.info())),
    route('DELETE', API_PATHS.cloudBackup, 'visual', async (api) => {
      await api.s.cloud.remove();
      return emptyResponse(204);
    }),
    route('GET', API_PATHS.cloud, 'visual', async (api) => jsonResponse(200, { url: readCloudConfig(api.s.storage)?.url ?? null })),
    route('PUT', API_PATHS.cloud, 'visual', async (api, req) => {
      const url = (await readJsonBody(req.body, 2048, api.memory) as { url?: unknown } | null)?.url;
      if (url === null) writeCloudConfig(api.s.storage, null);
      else if (typeof url === 'string' && /^https?:\/\/[^\s/]+[^\s]*$/.test(url) && url.length <= 512) writeCloudConfig(api.s.storage, { url });
      else throw errors.badRequest('invalid_cloud_url', 'url must be an http(s) URL, or null to forget the cloud');
      return jsonResponse(200, { url: readCloudConfig(api.s.storage)?.url ?? null });
    }),

    route('PUT', API_PATHS.provisioning, 'visual', async (api) => jsonResponse(200, await api.s.mode.enable())),
    // 409 names why the mode last stopped (docs/firmware-api.md).
    route('GET', API_PATHS.provisioning, 'visual', async (api) => {
      api.requireMode();
      return jsonResponse(200, api.s.mode.status());
    }),
    route('DELETE', API_PATHS.provisioning, 'visual', async (api) => {
      api.requireMode();
      await api.s.mode.disable('request');
      return emptyResponse(204);
    }),
    route('POST', API_PATHS.provisioningToken, 'open', async (api, req) => api.exchange(req)),

    ...DeviceApi.recordRoutes('controllers'),
    ...DeviceApi.recordRoutes('clients'),
  ]);

  /** The four routes of one record kind. */
  private static recordRoutes(of: RecordKind): ApiRoute[] {
    const kind = of; // a const binding: these handlers are closures of a preloaded module (xsl: "no const")
    const list = recordsPath(kind);
    const one = recordPattern(kind);
    return [
      route('GET', list, 'visual-or-provisioning', async (api, _req, _p, t) => {
        api.tokenMayRead(t, kind, null);
        return jsonResponse(200, api.s.records.list(kind));
      }),
      route('GET', one, 'visual-or-provisioning', async (api, _req, p, t) => {
        const uuid = api.uuidParam(p);
        api.tokenMayRead(t, kind, uuid);
        if (api.faults.has(`${kind}/${uuid}`)) throw new DeviceError(500, 'injected_fault', `Fault injected on ${kind}/${uuid}`);
        const text = api.s.records.getText(kind, uuid);
        if (text === null) throw errors.notFound('record_not_found', `No ${kind.slice(0, -1)} record ${uuid}`);
        // The stored text as it is (it was checked when it was written): one record in memory, once.
        const bytes = utf8Encode(text);
        return { status: 200, headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) }, body: bytes };
      }),
      route('PUT', one, 'visual', async (api, req, p) => api.putRecord(kind, api.uuidParam(p), req)),
      route('DELETE', one, 'visual', async (api, _req, p) => {
        if (!api.s.records.remove(kind, api.uuidParam(p))) throw errors.notFound('record_not_found', 'No such record');
        return emptyResponse(204);
      }),
    ];
  }

  /**
   * Debug builds only (the `fault` console command): record reads that fail with 500, so a bench
   * can produce the count-mismatch outcomes of spec 3.6 on any board, real or virtual.
   */
  readonly faults = new Set<string>();

  /** The board's request memory (request-memory.ts): connections and heads on the listeners, bodies read whole here. */
  readonly memory: RequestBudget;

  constructor(private readonly s: ApiServices) {
    // At least a record read whole beside its connection and head (a build may allow larger records).
    this.memory = new RequestBudget(Math.max(REQUEST_MEMORY_BYTES, s.settings.maxRecordBytes + 8192));
  }

  /** The whole API: never throws; errors become JSON answers. */
  async handle(req: HttpRequest): Promise<HttpResponse> {
    try {
      // Spec 5.3: the provisioning-token header is refused on Ethernet, whatever the route.
      if (req.headers['provisioning-token'] !== undefined && req.iface !== 'softap') {
        await drain(req.body);
        throw errors.forbidden('provisioning_token_not_on_softap', 'The provisioning-token header is only accepted on the SoftAP interface');
      }
      const m = matchRoute(DeviceApi.routes, req.method, req.path);
      if ('methods' in m) {
        await drain(req.body);
        if (m.methods.length === 0) throw errors.notFound('route_not_found', 'No such route');
        return jsonResponse(405, { error: 'method_not_allowed', message: `Allowed: ${m.methods.join(', ')}` }, { allow: m.methods.join(', ') });
      }
      return await m.route.run(this, req, m.params, this.authorize(req, m.route.access));
    } catch (err) {
      if (err instanceof DeviceError) return errorResponse(err);
      this.s.log('error', `unhandled error on ${req.method} ${req.path}: ${err instanceof Error ? err.message : String(err)}`);
      return errorResponse(new DeviceError(500, 'internal_error', 'Internal error'));
    }
  }

  private authorize(req: HttpRequest, access: Access): ProvisioningToken | null {
    if (access === 'open') return null;
    const presented = req.headers['provisioning-token'];
    if (presented !== undefined) {
      if (access === 'visual') throw errors.forbidden('provisioning_token_not_allowed', 'This route needs a visual-token');
      this.requireMode();
      return this.s.tokens.authenticate(presented, req.stationMac);
    }
    this.s.visual.check(req.headers['visual-token']);
    return null;
  }

  private requireMode(): void {
    if (this.s.mode.active) return;
    const st = this.s.mode.status();
    const reason = st.last_stop_reason ?? null;
    throw new DeviceError(409, 'provisioning_mode_off', `Provisioning mode is not active${reason ? ` (it last stopped: ${reason})` : ''}`, { state: st.state, last_stop_reason: reason });
  }

  /**
   * One attempt at a throttled door (docs/firmware-login-throttle.md). While the back-off is in
   * force: 429 with Retry-After, the attempt not even checked. Otherwise `attempt` runs; an error
   * with one of the `failures` statuses counts as a failure, an answer as a success. Nothing here
   * waits: the board goes on serving other requests.
   */
  private async throttled(throttle: FailureThrottle, failures: number[], req: HttpRequest, attempt: () => Promise<HttpResponse>): Promise<HttpResponse> {
    const waitMs = throttle.retryAfterMs();
    if (waitMs !== null) {
      await drain(req.body);
      const seconds = waitMs === Infinity ? throttle.policy.maxLockoutMs / 1000 : Math.max(1, Math.ceil(waitMs / 1000));
      const message = waitMs === Infinity ? 'Too many failed attempts: locked until the admin password is set again on the serial console' : `Too many failed attempts: try again in ${seconds} s`;
      return jsonResponse(429, { error: 'too_many_attempts', message, details: { retry_after_seconds: seconds, failed_attempts: throttle.failedAttempts() } }, { 'retry-after': String(seconds) });
    }
    let res: HttpResponse;
    try {
      res = await attempt();
    } catch (err) {
      if (err instanceof DeviceError && failures.includes(err.status)) throttle.failed();
      throw err;
    }
    throttle.succeeded();
    return res;
  }

  /** A client's token reads only its own record; a controller target's reads everything (spec 3.6 step 6). */
  private tokenMayRead(t: ProvisioningToken | null, kind: RecordKind | 'backup', uuid: string | null): void {
    if (t === null || t.kind === 'controllers') return;
    if (kind === 'clients' && uuid === t.uuid) return;
    throw errors.forbidden('provisioning_token_scope', 'A client provisioning token only reads its own record');
  }

  private uuidParam(p: Record<string, string>): string {
    const uuid = p.uuid ?? '';
    if (!isUuid(uuid)) throw errors.badRequest('invalid_uuid', `The UUID is not valid (${UUID_RULE})`);
    return uuid;
  }

  private async getBackup(req: HttpRequest, t: ProvisioningToken | null, withBody: boolean): Promise<HttpResponse> {
    this.tokenMayRead(t, 'backup', null);
    const size = this.s.local.size();
    const etag = this.s.local.etag();
    if (size === null || etag === null) throw errors.notFound('no_backup', 'No backup exists');
    const headers = { 'content-type': 'application/json', 'content-length': String(size), etag: quoteEtag(etag) };
    if (ifNoneMatches(req.headers['if-none-match'], etag)) return emptyResponse(304, { etag: quoteEtag(etag) });
    return withBody ? { status: 200, headers, body: this.s.local.reader() } : { status: 200, headers };
  }

  /** Spec 3.3, 5.2: a token for a UUID that has a record, bound to the MAC the record names. */
  private async exchange(req: HttpRequest): Promise<HttpResponse> {
    if (req.iface !== 'softap') {
      await drain(req.body);
      throw errors.forbidden('provisioning_softap_only', 'The token exchange is only served on the SoftAP interface');
    }
    if (!this.s.mode.active) await drain(req.body);
    this.requireMode();
    // Spec 3.5 step 4: a client retries on 404 at every scan cycle while its record is not yet
    // registered, so an unknown UUID is not a failure; a wrong MAC for a known one is.
    return this.throttled(this.s.mode.exchangeThrottle, [403], req, () => this.issueToken(req));
  }

  private async issueToken(req: HttpRequest): Promise<HttpResponse> {
    const body = (await readJsonBody(req.body, 1024, this.memory)) as { uuid?: unknown; mac?: unknown } | null;
    const mac = normalizeMac(body?.mac);
    if (!body || !isUuid(body.uuid) || mac === null) {
      throw errors.badRequest('invalid_token_request', 'The body must be {"uuid": "<uuid>", "mac": "AA:BB:CC:DD:EE:FF"}');
    }
    const kind: RecordKind | null = this.s.records.has('clients', body.uuid) ? 'clients' : this.s.records.has('controllers', body.uuid) ? 'controllers' : null;
    if (kind === null) throw errors.notFound('unknown_uuid', 'No record exists for this UUID');
    if (this.s.records.macOf(kind, body.uuid) !== mac || !this.s.mode.allows(mac)) {
      throw errors.forbidden('mac_not_registered', 'The MAC is not the one registered for this UUID');
    }
    if (req.stationMac !== undefined && req.stationMac !== mac) {
      throw errors.forbidden('mac_not_station', 'The MAC is not the associated station');
    }
    const token = this.s.tokens.issue(mac, body.uuid, kind);
    this.s.log('info', tokenIssuedMessage(mac, kind, body.uuid));
    return jsonResponse(200, { token: token.token, expires_in: this.s.settings.provisioningTokenTtlSeconds });
  }

  private async putRecord(kind: RecordKind, uuid: string, req: HttpRequest): Promise<HttpResponse> {
    const value = await readJsonBody(req.body, this.s.settings.maxRecordBytes, this.memory);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw errors.badRequest('invalid_record', 'A record is a JSON object');
    const record = value as Record<string, unknown>;
    const mac = normalizeMac(record[MAC_FIELD[kind]]);
    if (mac === null) throw errors.badRequest('invalid_record', `A ${kind.slice(0, -1)} record needs "${MAC_FIELD[kind]}": "AA:BB:CC:DD:EE:FF"`);
    if (record.uuid !== undefined && record.uuid !== uuid) throw errors.badRequest('invalid_record', 'The record uuid differs from the path');
    // A client record is the client's whole configuration (spec 2.6): refuse one it could not use.
    if (kind === 'clients') {
      const problem = clientConfigurationProblem(record);
      if (problem) throw errors.badRequest('invalid_record', `Not a usable client configuration: ${problem.field} ${problem.reason}`, { field: problem.field });
    }
    const existed = this.s.records.has(kind, uuid);
    this.s.records.put(kind, uuid, JSON.stringify({ ...record, uuid, [MAC_FIELD[kind]]: mac }));
    this.s.configuredLocally?.();
    return jsonResponse(existed ? 200 : 201, { uuid });
  }
}
