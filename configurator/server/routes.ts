// The configurator's API, under /api, for its own page only (request-guard.ts): the site (settings,
// controllers, configurations, records) and, through the server, each controller's device-local
// API (docs/configurator-controller-access.md). JSON in and out; errors from errors.ts.
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { MAX_EXPORT_BYTES, parseConfiguration } from './configuration.ts';
import { ANSWERS } from './device-answers.ts';
import type { DeviceOps } from './device-ops.ts';
import { ConfiguratorError } from './errors.ts';
import type { Session, Sessions } from './sessions.ts';
import { checkRecord, MAC_FIELD, type SiteStore } from './site-store.ts';

/** JSON bodies other than a configuration are small (a controller, a record, the client settings). */
const SMALL_BODY = '32kb';

/**
 * The browser's session, or for a browser without one (not logged in to any controller) an empty
 * one that lives for this request only: reading or editing the site opens no session.
 */
const session = (res: Response): Session => (res.locals.session as Session | undefined) ?? { tokens: new Map(), lastSeenMs: 0 };

function idParam(req: Request): number {
  const raw = String(req.params.id);
  const id = Number(raw);
  if (!/^[1-9]\d{0,9}$/.test(raw)) throw new ConfiguratorError('controller_not_found', `No controller ${JSON.stringify(raw.slice(0, 20))} in this site`);
  return id;
}

/** A body, when there is one, must say it is JSON (a form post is not taken for one). */
function requireJson(req: Request): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (hasBody && !req.is('application/json')) throw new ConfiguratorError('unsupported_media_type');
}

export function apiRoutes(store: SiteStore, ops: DeviceOps, sessions: Sessions): Router {
  const r = express.Router();
  const small = express.json({ limit: SMALL_BODY, strict: false, type: () => true });
  // A configuration (the page's Save, an imported file): raw bytes up to the controller's limit,
  // refused before parsing beyond it (413), then checked as a whole.
  const raw = express.raw({ limit: MAX_EXPORT_BYTES, type: () => true });
  const document: RequestHandler = (req, res, next) =>
    raw(req, res, (err?: unknown) => {
      const e = err as { type?: string; length?: number } | undefined;
      next(e?.type === 'entity.too.large' ? ConfiguratorError.tooLarge(Number(req.headers['content-length']) || (e.length ?? 0), MAX_EXPORT_BYTES) : err);
    });
  const json: RequestHandler = (req, res, next) => {
    requireJson(req);
    small(req, res, next);
  };

  r.get('/site', (_req, res) => {
    res.json({ path: store.path, controllers: store.controllers(), client_settings: store.clientSettings() });
  });
  r.put('/site/client-settings', json, (req, res) => {
    res.json(store.setClientSettings(req.body));
  });

  r.post('/controllers', json, (req, res) => {
    res.status(201).json(store.addController(req.body));
  });
  r.get('/controllers/:id', (req, res) => {
    res.json(store.controller(idParam(req)));
  });
  r.put('/controllers/:id', json, (req, res) => {
    const id = idParam(req);
    const before = store.controller(id);
    const after = store.updateController(id, req.body);
    // A visual-token is the controller's at that address: another host is never sent it.
    if (after.address !== before.address) sessions.forgetController(id);
    res.json(after);
  });
  r.delete('/controllers/:id', (req, res) => {
    const id = idParam(req);
    store.removeController(id);
    sessions.forgetController(id);
    res.status(204).end();
  });

  r.get('/controllers/:id/configuration', (req, res) => {
    const c = store.configuration(idParam(req));
    res.json({ configuration: c.configuration, etag: c.etag, size: c.size, limit: MAX_EXPORT_BYTES });
  });
  r.put('/controllers/:id/configuration', (req, _res, next) => (requireJson(req), next()), document, (req, res) => {
    const id = idParam(req);
    store.controller(id);
    const c = store.setConfiguration(id, parseConfiguration(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)));
    res.json({ configuration: c.configuration, etag: c.etag, size: c.size, limit: MAX_EXPORT_BYTES });
  });
  r.get('/controllers/:id/export', (req, res) => {
    const id = idParam(req);
    const name = store.controller(id).name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || `controller-${id}`;
    const c = store.configuration(id);
    res.set({ 'content-type': 'application/json', 'content-disposition': `attachment; filename="${name}-backup.json"`, etag: `"${c.etag}"` }).send(c.text);
  });

  r.get('/controllers/:id/records', (req, res) => {
    res.json({ records: store.records(idParam(req)) });
  });
  // Registered in the site, then written to the controller when this browser is logged in to it.
  r.post('/controllers/:id/records', json, async (req, res) => {
    const id = idParam(req);
    const c = store.controller(id);
    const b = (req.body ?? {}) as Record<string, unknown>;
    const kind = b.kind;
    let body: Record<string, unknown>;
    if (kind === 'clients') {
      const settings = store.clientSettings();
      if (!settings) throw new ConfiguratorError('invalid_record', 'Set the site\'s client settings first (Wi-Fi, MQTT broker, CA certificate): every client record carries them');
      body = { name: b.name ?? '', mac: b.mac, ...settings };
    } else body = { name: b.name ?? '', ethernet_mac: b.mac };
    const checked = checkRecord(kind, b.uuid, body);
    const summary = store.putRecord(id, checked.kind, checked.uuid, checked.body);
    let written: { on_controller: boolean; problem: string | null } = { on_controller: false, problem: 'not logged in to the controller: Deploy writes it later' };
    if (session(res).tokens.has(id)) {
      try {
        await ops.call(session(res), c, 'PUT', `/api/${checked.kind}/${encodeURIComponent(checked.uuid)}`, [200, 201], { body: JSON.stringify(checked.body) });
        written = { on_controller: true, problem: null };
      } catch (err) {
        if (!(err instanceof Error)) throw err;
        written = { on_controller: false, problem: err.message };
      }
    }
    res.status(201).json({ record: summary, ...written, mac_field: MAC_FIELD[checked.kind] });
  });
  r.delete('/controllers/:id/records/:kind/:uuid', async (req, res) => {
    const id = idParam(req);
    const c = store.controller(id);
    store.removeRecord(id, String(req.params.kind), String(req.params.uuid));
    if (session(res).tokens.has(id)) await ops.call(session(res), c, 'DELETE', `/api/${String(req.params.kind)}/${encodeURIComponent(String(req.params.uuid))}`, [204, 404]);
    res.status(204).end();
  });

  // --- the controller, through this server ---
  // The one request that opens a session (sessions.ts): a browser's first log-in to a controller.
  r.post('/controllers/:id/login', json, async (req, res) => {
    const c = store.controller(idParam(req));
    const current = res.locals.session as Session | undefined;
    // Refused before the controller is asked for a token that could not be kept.
    if (!current) sessions.checkRoom();
    const { token, expires_in } = await ops.login(c, (req.body as { password?: unknown } | null)?.password);
    const setCookie = sessions.keepToken(current, c.id, token);
    if (setCookie) res.append('set-cookie', setCookie);
    res.json({ expires_in });
  });
  r.post('/controllers/:id/logout', (req, res) => {
    const setCookie = sessions.forgetToken(res.locals.session as Session | undefined, idParam(req));
    if (setCookie) res.append('set-cookie', setCookie);
    res.status(204).end();
  });
  r.get('/controllers/:id/state', async (req, res) => {
    res.json(await ops.state(session(res), store.controller(idParam(req))));
  });
  r.post('/controllers/:id/deploy', async (req, res) => {
    const c = store.controller(idParam(req));
    const done = await ops.deploy(session(res), c);
    res.json({ ...done, state: await ops.state(session(res), c) });
  });
  r.post('/controllers/:id/pull', async (req, res) => {
    const c = store.controller(idParam(req));
    const done = await ops.pull(session(res), c);
    res.json({ ...done, state: await ops.state(session(res), c) });
  });

  r.put('/controllers/:id/provisioning', async (req, res) => {
    const c = store.controller(idParam(req));
    res.json((await ops.call(session(res), c, 'PUT', '/api/provisioning', [200], { timeoutMs: 30_000, answer: ANSWERS.mode })).json);
  });
  // While the mode is off the controller answers 409 with why it last stopped: shown as a state.
  r.get('/controllers/:id/provisioning', async (req, res) => {
    const c = store.controller(idParam(req));
    const a = await ops.call(session(res), c, 'GET', '/api/provisioning', [200, 409], { answer: ANSWERS.mode });
    if (a.status === 200) return void res.json(a.json);
    const details = (a.json as { details?: { state?: string; last_stop_reason?: string | null } } | undefined)?.details;
    if ((a.json as { error?: string } | undefined)?.error !== 'provisioning_mode_off') throw ops.refusal(c, 'GET', '/api/provisioning', a, [200]);
    res.json({ active: false, state: details?.state ?? 'disabled', last_stop_reason: details?.last_stop_reason ?? null });
  });
  r.delete('/controllers/:id/provisioning', async (req, res) => {
    const c = store.controller(idParam(req));
    await ops.call(session(res), c, 'DELETE', '/api/provisioning', [204], { timeoutMs: 30_000 });
    res.status(204).end();
  });
  r.get('/controllers/:id/events', async (req, res) => {
    const c = store.controller(idParam(req));
    res.json((await ops.call(session(res), c, 'GET', '/api/events', [200], { answer: ANSWERS.events })).json);
  });
  r.get('/controllers/:id/device-records', async (req, res) => {
    const c = store.controller(idParam(req));
    res.json({ records: await ops.deviceRecords(session(res), c) });
  });

  r.get('/controllers/:id/cloud', async (req, res) => {
    const c = store.controller(idParam(req));
    res.json((await ops.call(session(res), c, 'GET', '/api/cloud', [200], { answer: ANSWERS.cloud })).json);
  });
  r.put('/controllers/:id/cloud', json, async (req, res) => {
    const c = store.controller(idParam(req));
    const url = (req.body as { url?: unknown } | null)?.url;
    res.json((await ops.call(session(res), c, 'PUT', '/api/cloud', [200], { body: JSON.stringify({ url: url === '' ? null : url }), answer: ANSWERS.cloud })).json);
  });
  r.post('/controllers/:id/cloud-backup', async (req, res) => {
    const c = store.controller(idParam(req));
    res.json((await ops.call(session(res), c, 'POST', '/api/cloud-backup', [200], { timeoutMs: 60_000, answer: ANSWERS.cloudPush })).json);
  });
  // Retrieve changes the controller (it writes /backup.json): a POST here, so that a GET stays safe.
  r.post('/controllers/:id/cloud-backup/retrieve', async (req, res) => {
    const c = store.controller(idParam(req));
    const a = await ops.call(session(res), c, 'GET', '/api/cloud-backup', [200], { maxBytes: MAX_EXPORT_BYTES + 1024, timeoutMs: 60_000 });
    res.json({ etag: a.headers.get('etag')?.replace(/"/g, '') ?? null, size: a.bytes.length, state: await ops.state(session(res), c) });
  });
  r.delete('/controllers/:id/cloud-backup', async (req, res) => {
    const c = store.controller(idParam(req));
    await ops.call(session(res), c, 'DELETE', '/api/cloud-backup', [204], { timeoutMs: 60_000 });
    res.status(204).end();
  });

  r.use((_req, _res) => {
    throw new ConfiguratorError('route_not_found');
  });
  return r;
}
