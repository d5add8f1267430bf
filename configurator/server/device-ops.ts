// What the configurator does with one controller on the installer's behalf: read its state against
// the site (spec 2.3: HEAD /backup's ETag against the SHA-256 of the site's export, and the records
// it hands out), deploy the site's export and records, and pull a controller's backup and records
// into the site. The visual-token is the browser session's (sessions.ts); a controller that says
// the token is no longer valid logs the session out of it.
import { API_PATHS, recordPath, recordsPath } from '../../firmware/src/core/api-paths.ts';
import { unquoteEtag } from '../../firmware/src/core/http/etag.ts';
import { MAC_FIELD, RECORD_KINDS, type RecordKind } from '../../firmware/src/core/records.ts';
import type { Controller, ControllerState, RecordSummary } from '../schema/routes.ts';
import { MAX_EXPORT_BYTES, parseConfiguration } from './export.ts';
import type { ControllerLink, DeviceAnswer } from './controller-link.ts';
import { ANSWERS } from './device-answers.ts';
import { ConfiguratorError, ControllerAnswerError } from './errors.ts';
import type { Session } from './sessions.ts';
import type { SiteStore } from './site-store.ts';

/** Reading or writing a whole backup gets longer than the default per-request time-out. */
const BACKUP_TIMEOUT_MS = 30_000;

export class DeviceOps {
  constructor(
    private readonly store: SiteStore,
    private readonly linkFor: (c: Controller) => ControllerLink,
  ) {}

  /** The session's token for a controller, or 401 not_logged_in. */
  token(session: Session, c: Controller): string {
    const t = session.tokens.get(c.id);
    if (t === undefined) throw new ConfiguratorError('not_logged_in', `Log in to ${c.name} first (its admin password)`);
    return t;
  }

  /**
   * A request with the session's token; when the controller no longer takes it (a restart, 30 min
   * unused), the session forgets it and the page is told to log in again.
   */
  async call(session: Session, c: Controller, method: string, path: string, ok: number[], r: Parameters<ControllerLink['request']>[2] = {}): Promise<DeviceAnswer> {
    const link = this.linkFor(c);
    const a = await link.request(method, path, { ...r, token: this.token(session, c) });
    if (a.status === 401 && ['invalid_visual_token', 'missing_visual_token'].includes((a.json as { error?: string } | undefined)?.error ?? '')) {
      session.tokens.delete(c.id);
      throw new ConfiguratorError('not_logged_in', `${c.name} no longer accepts this browser's log-in (it restarted, or 30 minutes passed unused): log in again`);
    }
    return link.judge(method, path, ok, a, r.answer);
  }

  /** A log-in to the controller: its visual-token, for the caller to keep in a session. */
  async login(c: Controller, password: string): Promise<{ token: string; expires_in: number }> {
    const a = await this.linkFor(c).expect('POST', API_PATHS.login, [200], { body: JSON.stringify({ password }) });
    const token = (a.json as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || !/^[0-9a-f]{16,128}$/.test(token)) throw new ConfiguratorError('controller_bad_answer', `${c.name} answered its log-in without a token`);
    return { token, expires_in: Number((a.json as { expires_in?: unknown }).expires_in) || 0 };
  }

  /** The controllers page's row: never throws for a controller that is down or refuses. */
  async state(session: Session, c: Controller): Promise<ControllerState> {
    const site = this.store.configuration(c.id);
    const s: ControllerState = {
      id: c.id,
      reachable: false,
      logged_in: session.tokens.has(c.id),
      problem: null,
      firmware_version: null,
      uuid: null,
      site_etag: site.etag,
      device_etag: null,
      backup: 'unknown',
      records: null,
      deployment_required: false,
      provisioning: null,
      cloud: null,
    };
    try {
      if (!s.logged_in) {
        // Anything the API answers (here 401: no token) shows the controller is there.
        await this.linkFor(c).request('HEAD', API_PATHS.backup);
        s.reachable = true;
        return s;
      }
      const status = (await this.call(session, c, 'GET', API_PATHS.status, [200], { answer: ANSWERS.object })).json as Record<string, any>;
      s.reachable = true;
      s.firmware_version = typeof status.firmware_version === 'string' ? status.firmware_version : null;
      s.uuid = typeof status.uuid === 'string' ? status.uuid : null;
      s.cloud = typeof status.cloud === 'string' ? status.cloud : null;
      const p = status.provisioning as { state?: string; expires_in?: number } | undefined;
      s.provisioning = { active: p?.state === 'enabled', ...(p?.state === 'enabled' && typeof p.expires_in === 'number' ? { expires_in: p.expires_in } : {}) };
      // Spec 2.3: HEAD /backup's ETag against the local database's.
      const head = await this.call(session, c, 'HEAD', API_PATHS.backup, [200, 404]);
      s.device_etag = head.status === 200 ? unquoteEtag(head.headers.get('etag')) : null;
      s.backup = head.status === 404 ? 'no_backup' : s.device_etag === site.etag ? 'in_sync' : 'deployment_required';
      const onDevice = await this.deviceRecordIds(session, c);
      const inSite = this.store.records(c.id).map((r) => `${r.kind}/${r.uuid}`);
      s.records = { missing_on_controller: inSite.filter((k) => !onDevice.has(k)), only_on_controller: [...onDevice].filter((k) => !inSite.includes(k)).sort() };
      s.deployment_required = s.backup !== 'in_sync' || s.records.missing_on_controller.length > 0;
    } catch (err) {
      if (!(err instanceof ConfiguratorError || err instanceof ControllerAnswerError)) throw err;
      s.logged_in = session.tokens.has(c.id);
      if (err instanceof ControllerAnswerError || err.code === 'not_logged_in' || err.code === 'controller_bad_answer') s.reachable = true;
      s.problem = err.message;
    }
    return s;
  }

  /** The error for an answer the caller does not take (ControllerLink.refusal). */
  refusal(c: Controller, method: string, path: string, a: DeviceAnswer, ok: readonly number[]): Error {
    return this.linkFor(c).refusal(method, path, a, ok);
  }

  /** The records on the controller, as the page shows them (the MACs its allowlist is built from). */
  async deviceRecords(session: Session, c: Controller): Promise<RecordSummary[]> {
    const out: RecordSummary[] = [];
    for (const key of [...(await this.deviceRecordIds(session, c))].sort()) {
      const [kind, uuid] = key.split('/') as [RecordKind, string];
      const body = (await this.call(session, c, 'GET', recordPath(kind, uuid), [200], { answer: ANSWERS.object })).json as Record<string, unknown>;
      out.push({ kind, uuid, name: typeof body.name === 'string' ? body.name : '', mac: String(body[MAC_FIELD[kind]] ?? '') });
    }
    return out;
  }

  private async deviceRecordIds(session: Session, c: Controller): Promise<Set<string>> {
    const ids = new Set<string>();
    for (const kind of RECORD_KINDS) {
      const list = (await this.call(session, c, 'GET', recordsPath(kind), [200], { answer: ANSWERS.uuids })).json as string[];
      for (const uuid of list) ids.add(`${kind}/${uuid}`);
    }
    return ids;
  }

  /**
   * Deploy: the site's export as PUT /backup (the controller computes the same ETag; checked), then
   * every site record. Records the controller has and the site does not are left alone.
   */
  async deploy(session: Session, c: Controller): Promise<{ etag: string; size: number; records_written: number }> {
    const site = this.store.configuration(c.id);
    const put = await this.call(session, c, 'PUT', API_PATHS.backup, [200], { body: site.text, contentType: 'application/json', timeoutMs: BACKUP_TIMEOUT_MS, answer: ANSWERS.object });
    const stored = unquoteEtag(put.headers.get('etag')) ?? (put.json as { etag?: string } | undefined)?.etag ?? null;
    if (stored !== site.etag) throw new ConfiguratorError('controller_bad_answer', `${c.name} stored the backup with ETag ${stored}, not ${site.etag}: deploy again`);
    let written = 0;
    for (const r of this.store.recordBodies(c.id)) {
      await this.call(session, c, 'PUT', recordPath(r.kind, r.uuid), [200, 201], { body: r.body });
      written++;
    }
    return { etag: site.etag, size: site.size, records_written: written };
  }

  /**
   * Pull: the controller's backup and records into the site. Everything is read and checked first;
   * only then is the site changed, in one transaction: a bad backup changes nothing.
   */
  async pull(session: Session, c: Controller): Promise<{ etag: string; records: number; canonical: boolean }> {
    const got = await this.call(session, c, 'GET', API_PATHS.backup, [200, 404], { maxBytes: MAX_EXPORT_BYTES + 1024, timeoutMs: BACKUP_TIMEOUT_MS });
    if (got.status === 404) throw new ControllerAnswerError(404, 'no_backup', `${c.name} has no backup to pull (deploy one first)`);
    let configuration;
    try {
      configuration = parseConfiguration(got.bytes);
    } catch (err) {
      if (err instanceof ConfiguratorError) throw new ConfiguratorError(err.code, `${c.name}'s backup cannot be imported: ${err.message}`, err.details);
      throw err;
    }
    const records: { kind: RecordKind; uuid: string; body: unknown }[] = [];
    for (const key of await this.deviceRecordIds(session, c)) {
      const [kind, uuid] = key.split('/') as [RecordKind, string];
      const a = await this.call(session, c, 'GET', recordPath(kind, uuid), [200], { answer: ANSWERS.object });
      records.push({ kind, uuid, body: a.json });
    }
    this.store.importPulled(c.id, configuration, records);
    const now = this.store.configuration(c.id);
    return { etag: now.etag, records: records.length, canonical: now.text === got.bytes.toString('utf8') };
  }
}
