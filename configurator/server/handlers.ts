// The configurator's API, under /api, for its own page only (web-common/server/request-guard.ts): the
// site (settings, controllers, configurations, records) and, through the server, each controller's
// device-local API (docs/configurator-controller-access.md). The routes, their bodies and answers are
// the table of schema/routes.ts: each is registered from it with its handler here, its body checked
// against its schema before the handler runs. JSON in and out; errors from errors.ts.
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { checker, type Checker, type Problem } from '../../cloud/schema/validator.ts';
import { API_PATHS, recordPath } from '../../firmware/src/core/api-paths.ts';
import { quoteEtag, unquoteEtag } from '../../firmware/src/core/http/etag.ts';
import { MAC_FIELD, type RecordKind } from '../../firmware/src/core/records.ts';
import { ROUTES, type Answer, type Body, type RouteName, type Routes, type RouteSpec } from '../schema/routes.ts';
import { clientReports } from './client-reports.ts';
import { ANSWERS } from './device-answers.ts';
import type { DeviceOps } from './device-ops.ts';
import { ConfiguratorError } from './errors.ts';
import { MAX_EXPORT_BYTES, parseConfiguration } from './export.ts';
import type { Session, Sessions } from './sessions.ts';
import { checkRecord, type SiteStore } from './site-store.ts';

/** JSON bodies other than a configuration are small (a controller, a record, the client settings). */
const SMALL_BODY = '32kb';
/** Moving a whole backup between a controller and the cloud takes longer than the default time-out. */
const CLOUD_TIMEOUT_MS = 60_000;
/** Turning the SoftAP on or off takes a moment. */
const PROVISIONING_TIMEOUT_MS = 30_000;

/** What a handler has: the controller's id (`:id`, checked), the checked body, this browser's session. */
interface Call<K extends RouteName> {
  id: number;
  body: Body<K>;
  /**
   * The browser's session, or for a browser without one (not logged in to any controller) an empty
   * one that lives for this request only: reading or editing the site opens no session.
   */
  session: Session;
  req: Request;
  res: Response;
}

/** What a handler gives back: the route's JSON answer; nothing for a file, which it sends itself. */
type Reply<K extends RouteName> = Routes[K] extends { file: true } ? void : Answer<K>;
type Handlers = { [K in RouteName]: (call: Call<K>) => Reply<K> | Promise<Reply<K>> };

/** A refused body, as the configurator words it: the field and what it should be. */
function bodyRefusal(spec: RouteSpec, p: Problem): ConfiguratorError {
  const code = spec.bodyError ?? 'invalid_body';
  if (p.field === '') return new ConfiguratorError(code, p.expected);
  const message = p.keyword === 'additionalProperties' ? `${p.field}: unknown key` : `${p.field}: expected ${p.expected}`;
  return new ConfiguratorError(code, message, { field: p.field });
}

/** A body, when there is one, must say it is JSON (a form post is not taken for one). */
function requireJson(req: Request): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (hasBody && !req.is('application/json')) throw new ConfiguratorError('unsupported_media_type');
}

export function apiRoutes(store: SiteStore, ops: DeviceOps, sessions: Sessions): Router {
  const r = express.Router();
  r.param('id', (_req, _res, next, raw: string) => {
    if (!/^[1-9]\d{0,9}$/.test(raw)) throw new ConfiguratorError('controller_not_found', `No controller ${JSON.stringify(raw.slice(0, 20))} in this site`);
    next();
  });
  const small = express.json({ limit: SMALL_BODY, strict: false, type: () => true });
  // A configuration (the page's Save, an imported file): raw bytes up to the controller's limit,
  // refused before parsing beyond it (413), then checked as a whole.
  const raw = express.raw({ limit: MAX_EXPORT_BYTES, type: () => true });
  const document: RequestHandler = (req, res, next) => {
    requireJson(req);
    raw(req, res, (err?: unknown) => {
      const e = err as { type?: string; length?: number } | undefined;
      next(e?.type === 'entity.too.large' ? ConfiguratorError.tooLarge(Number(req.headers['content-length']) || (e.length ?? 0), MAX_EXPORT_BYTES) : err);
    });
  };
  const json = (check: Checker<RouteSpec['body'] & {}>, spec: RouteSpec): RequestHandler => (req, res, next) => {
    requireJson(req);
    small(req, res, (err?: unknown) => {
      if (err) return next(err);
      next(check(req.body) ? undefined : bodyRefusal(spec, check.problems()[0]!));
    });
  };

  const handlers: Handlers = {
    site: () => ({ path: store.path, controllers: store.controllers(), client_settings: store.clientSettings() }),
    saveClientSettings: ({ body }) => store.setClientSettings(body),

    addController: ({ body }) => store.addController(body),
    controller: ({ id }) => store.controller(id),
    updateController: ({ id, body }) => {
      const before = store.controller(id);
      const after = store.updateController(id, body);
      // A visual-token is the controller's at that address: another host is never sent it.
      if (after.address !== before.address) sessions.forgetController(id);
      return after;
    },
    removeController: ({ id }) => {
      store.removeController(id);
      sessions.forgetController(id);
    },

    configuration: ({ id }) => {
      const c = store.configuration(id);
      return { configuration: c.configuration, etag: c.etag, size: c.size, limit: MAX_EXPORT_BYTES };
    },
    saveConfiguration: ({ id, req }) => {
      store.controller(id);
      const c = store.setConfiguration(id, parseConfiguration(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)));
      return { configuration: c.configuration, etag: c.etag, size: c.size, limit: MAX_EXPORT_BYTES };
    },
    exportConfiguration: ({ id, res }) => {
      const name = store.controller(id).name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || `controller-${id}`;
      const c = store.configuration(id);
      res.set({ 'content-type': 'application/json', 'content-disposition': `attachment; filename="${name}-backup.json"`, etag: quoteEtag(c.etag) }).send(c.text);
    },

    records: ({ id }) => ({ records: store.records(id) }),
    // Registered in the site, then written to the controller when this browser is logged in to it.
    addRecord: async ({ id, body: b, session }) => {
      const c = store.controller(id);
      let body: Record<string, unknown>;
      if (b.kind === 'clients') {
        const settings = store.clientSettings();
        if (!settings) throw new ConfiguratorError('invalid_record', 'Set the site\'s client settings first (Wi-Fi, MQTT broker, CA certificate): every client record carries them');
        body = { name: b.name ?? '', mac: b.mac, ...settings };
      } else body = { name: b.name ?? '', ethernet_mac: b.mac };
      const checked = checkRecord(b.kind, b.uuid, body);
      const record = store.putRecord(id, checked.kind, checked.uuid, checked.body);
      let written: { on_controller: boolean; problem: string | null } = { on_controller: false, problem: 'not logged in to the controller: Deploy writes it later' };
      if (session.tokens.has(id)) {
        try {
          await ops.call(session, c, 'PUT', recordPath(checked.kind, checked.uuid), [200, 201], { body: JSON.stringify(checked.body) });
          written = { on_controller: true, problem: null };
        } catch (err) {
          if (!(err instanceof Error)) throw err;
          written = { on_controller: false, problem: err.message };
        }
      }
      return { record, ...written, mac_field: MAC_FIELD[checked.kind] };
    },
    removeRecord: async ({ id, session, req }) => {
      const c = store.controller(id);
      // Removed from the site: the kind was one of a stored record's.
      const kind = String(req.params.kind) as RecordKind;
      const uuid = String(req.params.uuid);
      store.removeRecord(id, kind, uuid);
      if (session.tokens.has(id)) await ops.call(session, c, 'DELETE', recordPath(kind, uuid), [204, 404]);
    },

    // The one request that opens a session (sessions.ts): a browser's first log-in to a controller.
    login: async ({ id, body, res }) => {
      const c = store.controller(id);
      const current = res.locals.session as Session | undefined;
      // Refused before the controller is asked for a token that could not be kept.
      if (!current) sessions.checkRoom();
      const { token, expires_in } = await ops.login(c, body.password);
      const setCookie = sessions.keepToken(current, c.id, token);
      if (setCookie) res.append('set-cookie', setCookie);
      return { expires_in };
    },
    logout: ({ id, res }) => {
      const setCookie = sessions.forgetToken(res.locals.session as Session | undefined, id);
      if (setCookie) res.append('set-cookie', setCookie);
    },
    state: ({ id, session }) => ops.state(session, store.controller(id)),
    deploy: async ({ id, session }) => {
      const c = store.controller(id);
      const done = await ops.deploy(session, c);
      return { ...done, state: await ops.state(session, c) };
    },
    pull: async ({ id, session }) => {
      const c = store.controller(id);
      const done = await ops.pull(session, c);
      return { ...done, state: await ops.state(session, c) };
    },

    enableProvisioning: async ({ id, session }) =>
      (await ops.call(session, store.controller(id), 'PUT', API_PATHS.provisioning, [200], { timeoutMs: PROVISIONING_TIMEOUT_MS, answer: ANSWERS.mode })).json,
    // While the mode is off the controller answers 409 with why it last stopped: shown as a state.
    provisioning: async ({ id, session }) => {
      const c = store.controller(id);
      const a = await ops.call(session, c, 'GET', API_PATHS.provisioning, [200, 409], { answer: ANSWERS.mode });
      if (a.status === 200) return a.json;
      const details = (a.json as { details?: { state?: string; last_stop_reason?: string | null } } | undefined)?.details;
      if ((a.json as { error?: string } | undefined)?.error !== 'provisioning_mode_off') throw ops.refusal(c, 'GET', API_PATHS.provisioning, a, [200]);
      return { active: false, state: details?.state ?? 'disabled', last_stop_reason: details?.last_stop_reason ?? null };
    },
    disableProvisioning: async ({ id, session }) => {
      await ops.call(session, store.controller(id), 'DELETE', API_PATHS.provisioning, [204], { timeoutMs: PROVISIONING_TIMEOUT_MS });
    },
    events: async ({ id, session }) => (await ops.call(session, store.controller(id), 'GET', API_PATHS.events, [200], { answer: ANSWERS.events })).json,
    deviceRecords: async ({ id, session }) => ({ records: await ops.deviceRecords(session, store.controller(id)) }),
    clients: ({ id, session }) => clientReports(store, ops, session, store.controller(id)),

    cloud: async ({ id, session }) => (await ops.call(session, store.controller(id), 'GET', API_PATHS.cloud, [200], { answer: ANSWERS.cloud })).json,
    setCloud: async ({ id, body, session }) =>
      (await ops.call(session, store.controller(id), 'PUT', API_PATHS.cloud, [200], { body: JSON.stringify({ url: body.url === '' ? null : body.url }), answer: ANSWERS.cloud })).json,
    // What the cloud holds, asked through the controller (only it can sign the request, spec 5.1).
    cloudBackup: async ({ id, session }) => {
      const c = store.controller(id);
      const a = (await ops.call(session, c, 'GET', API_PATHS.cloudBackupInfo, [200], { timeoutMs: CLOUD_TIMEOUT_MS, answer: ANSWERS.cloudInfo })).json as { stored: boolean; etag?: string | null; last_backup_date?: string | null; same_as_local?: boolean };
      const etag = a.stored ? (a.etag ?? null) : null;
      return { stored: a.stored, etag, last_backup_date: a.stored ? (a.last_backup_date ?? null) : null, same_as_controller: a.same_as_local === true, same_as_site: etag !== null && etag === store.configuration(id).etag };
    },
    pushCloud: async ({ id, session }) => (await ops.call(session, store.controller(id), 'POST', API_PATHS.cloudBackup, [200], { timeoutMs: CLOUD_TIMEOUT_MS, answer: ANSWERS.cloudPush })).json,
    retrieveCloud: async ({ id, session }) => {
      const c = store.controller(id);
      const a = await ops.call(session, c, 'GET', API_PATHS.cloudBackup, [200], { maxBytes: MAX_EXPORT_BYTES + 1024, timeoutMs: CLOUD_TIMEOUT_MS });
      return { etag: unquoteEtag(a.headers.get('etag')), size: a.bytes.length, state: await ops.state(session, c) };
    },
    deleteCloud: async ({ id, session }) => {
      await ops.call(session, store.controller(id), 'DELETE', API_PATHS.cloudBackup, [204], { timeoutMs: CLOUD_TIMEOUT_MS });
    },
  };

  for (const [name, spec] of Object.entries(ROUTES) as [RouteName, RouteSpec][]) {
    const handle = handlers[name] as (call: Call<RouteName>) => unknown;
    const body: RequestHandler[] = spec.document ? [document] : spec.body ? [json(checker(spec.body), spec)] : [];
    r[spec.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'](spec.path, ...body, async (req: Request, res: Response) => {
      const session = (res.locals.session as Session | undefined) ?? { tokens: new Map(), lastSeenMs: 0 };
      const answer = await handle({ id: Number(req.params.id), body: req.body as never, session, req, res });
      if (res.headersSent) return;
      if (spec.success === 204) return void res.status(204).end();
      res.status(spec.success).json(answer);
    });
  }

  r.use((_req, _res) => {
    throw new ConfiguratorError('route_not_found');
  });
  return r;
}
