// The site: one SQLite file the installer names (`fleet configurator --site site.db`), created when
// missing. It holds the site's controllers (name, address of the device-local API, hardware class),
// each controller's configuration (the export it deploys as /backup.json), the records each
// controller hands out at provisioning, and the site's client settings. Never the admin password,
// never a token (docs/configurator-site.md).
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { clientConfigurationProblem } from '../../firmware/src/core/client-configuration.ts';
import { isUuid, normalizeMac, UUID_RULE } from '../../firmware/src/core/ids.ts';
import { migrate, sqliteBook } from '../../cloud/store/migrate.ts';
import { MAC_FIELD, type RecordKind } from '../../firmware/src/core/records.ts';
import type { ClientSettings, ClientSettingsInput, Controller, ControllerInput, RecordSummary } from '../schema/routes.ts';
import { emptyConfiguration, type Configuration } from '../schema/controller-configuration.ts';
import { checkConfiguration, etagOf, exportText, MAX_EXPORT_BYTES } from './export.ts';
import { ConfiguratorError } from './errors.ts';

/** `PRAGMA application_id`: marks the file as a site, so a cloud database or another file is refused. */
const SITE_APPLICATION_ID = 0x46_43_53_31; // "FCS1"

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE controllers (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     name TEXT NOT NULL UNIQUE,
     address TEXT NOT NULL,
     hardware_class TEXT NOT NULL,
     configuration TEXT NOT NULL,
     created_at TEXT NOT NULL,
     updated_at TEXT NOT NULL
   );
   CREATE TABLE records (
     controller_id INTEGER NOT NULL REFERENCES controllers (id) ON DELETE CASCADE,
     kind TEXT NOT NULL CHECK (kind IN ('controllers', 'clients')),
     uuid TEXT NOT NULL,
     body TEXT NOT NULL,
     PRIMARY KEY (controller_id, kind, uuid)
   );
   CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  // When the controller last issued the record's device a provisioning token, as its event log said
  // (docs/configurator-clients.md): kept, since the controller's log keeps only its newest lines.
  `ALTER TABLE records ADD COLUMN provisioned_at TEXT;`,
];

export interface StoredConfiguration {
  configuration: Configuration;
  /** The exact export (what Deploy writes as /backup.json). */
  text: string;
  etag: string;
  size: number;
}

/** http://host[:port] only: the device-local API's origin; anything else is named and refused. */
export function normalizeAddress(value: string): string {
  const refuse = (why: string) => new ConfiguratorError('invalid_controller', `address: ${why}`, { field: 'address' });
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw refuse(`expected a URL such as http://192.168.1.20, got ${JSON.stringify(value.slice(0, 80))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(`expected http:// or https://, got ${url.protocol}`);
  if (url.username || url.password) throw refuse('no user name or password in the address (the admin password is asked when you log in)');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) throw refuse('only the scheme, host and port: the API paths are the controller\'s');
  return url.origin;
}

/** A controller as the site keeps it (its shape checked by the route, schema/routes.ts): name trimmed, address the API's origin. */
function storedController(input: ControllerInput): Omit<Controller, 'id' | 'created_at' | 'updated_at'> {
  return { name: input.name.trim(), address: normalizeAddress(input.address), hardware_class: input.hardware_class ?? 'ctl-s3' };
}

/** A record as the controller will take it (docs/firmware-records.md), or 400 naming the field. */
export function checkRecord(kind: unknown, uuid: unknown, body: unknown): { kind: RecordKind; uuid: string; body: Record<string, unknown> } {
  if (kind !== 'controllers' && kind !== 'clients') throw new ConfiguratorError('invalid_record', 'kind: expected "clients" or "controllers"', { field: 'kind' });
  if (!isUuid(uuid)) throw new ConfiguratorError('invalid_record', `uuid: expected ${UUID_RULE}`, { field: 'uuid' });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ConfiguratorError('invalid_record', 'A record is a JSON object');
  const record = { ...(body as Record<string, unknown>) };
  const field = MAC_FIELD[kind];
  const mac = normalizeMac(record[field]);
  if (mac === null) throw new ConfiguratorError('invalid_record', `${field}: expected a MAC address such as 24:0A:C4:10:00:21`, { field });
  if (record.name !== undefined && (typeof record.name !== 'string' || record.name.length > 64)) throw new ConfiguratorError('invalid_record', 'name: expected at most 64 characters', { field: 'name' });
  if (record.uuid !== undefined && record.uuid !== uuid) throw new ConfiguratorError('invalid_record', 'uuid: the record names another UUID', { field: 'uuid' });
  if (kind === 'clients') {
    const problem = clientConfigurationProblem(record);
    if (problem) throw new ConfiguratorError('invalid_record', `Not a usable client configuration: ${problem.field} ${problem.reason}`, { field: problem.field });
  }
  return { kind, uuid, body: { ...record, uuid, [field]: mac } };
}

/** The site's client settings (their shape checked by the route), checked as the firmware checks a client configuration. */
export function checkClientSettings(v: ClientSettingsInput): ClientSettings {
  const problem = clientConfigurationProblem(v);
  if (problem) throw new ConfiguratorError('invalid_settings', `${problem.field} ${problem.reason}`, { field: problem.field });
  const { wifi, mqtt } = v;
  return {
    wifi: { ssid: wifi.ssid, password: wifi.password },
    mqtt: { host: mqtt.host, port: mqtt.port, tls: mqtt.tls !== false, ...(mqtt.username ? { username: mqtt.username } : {}), ...(mqtt.password ? { password: mqtt.password } : {}) },
    ca_certificate: v.ca_certificate,
  };
}

export class SiteStore {
  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
  ) {}

  /** Opens the site file, creating it when missing; refuses a file that is not a site. */
  static open(path: string): SiteStore {
    const existed = existsSync(path);
    let db: Database.Database;
    try {
      db = new Database(path, { fileMustExist: false });
      db.pragma('foreign_keys = ON');
      db.pragma('synchronous = FULL');
      const book = sqliteBook(db, { applicationId: SITE_APPLICATION_ID });
      const version = book.read();
      const appId = db.pragma('application_id', { simple: true }) as number;
      if (existed && (version > 0 || appId !== 0) && appId !== SITE_APPLICATION_ID) throw new Error('it is another application\'s database, not a site');
      if (existed && version === 0 && (db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number }).n > 0) throw new Error('it holds tables that are not a site\'s');
      migrate(book, MIGRATIONS, { tooNew: (found, known) => `it was written by a newer configurator (site schema ${found}, this one knows ${known})` });
    } catch (err) {
      throw new SiteFileError(`${path} cannot be used as a site: ${err instanceof Error ? err.message : String(err)}`);
    }
    return new SiteStore(db, path);
  }

  close(): void {
    this.db.close();
  }

  controllers(): Controller[] {
    return this.db.prepare('SELECT id, name, address, hardware_class, created_at, updated_at FROM controllers ORDER BY name COLLATE NOCASE, id').all() as Controller[];
  }

  controller(id: number): Controller {
    const row = this.db.prepare('SELECT id, name, address, hardware_class, created_at, updated_at FROM controllers WHERE id = ?').get(id) as Controller | undefined;
    if (!row) throw new ConfiguratorError('controller_not_found', `No controller ${id} in this site`);
    return row;
  }

  addController(input: ControllerInput): Controller {
    const c = storedController(input);
    const now = new Date().toISOString();
    const text = exportText(emptyConfiguration());
    try {
      const r = this.db.prepare('INSERT INTO controllers (name, address, hardware_class, configuration, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)').run(c.name, c.address, c.hardware_class, text, now, now);
      return this.controller(Number(r.lastInsertRowid));
    } catch (err) {
      throw this.uniqueName(err, c.name);
    }
  }

  updateController(id: number, input: ControllerInput): Controller {
    this.controller(id);
    const c = storedController(input);
    try {
      this.db.prepare('UPDATE controllers SET name = ?, address = ?, hardware_class = ?, updated_at = ? WHERE id = ?').run(c.name, c.address, c.hardware_class, new Date().toISOString(), id);
    } catch (err) {
      throw this.uniqueName(err, c.name);
    }
    return this.controller(id);
  }

  removeController(id: number): void {
    if (this.db.prepare('DELETE FROM controllers WHERE id = ?').run(id).changes === 0) throw new ConfiguratorError('controller_not_found', `No controller ${id} in this site`);
  }

  configuration(id: number): StoredConfiguration {
    const row = this.db.prepare('SELECT configuration FROM controllers WHERE id = ?').get(id) as { configuration: string } | undefined;
    if (!row) throw new ConfiguratorError('controller_not_found', `No controller ${id} in this site`);
    return { configuration: JSON.parse(row.configuration) as Configuration, text: row.configuration, etag: etagOf(row.configuration), size: Buffer.byteLength(row.configuration) };
  }

  /** Replaces a controller's configuration (checked; at most the controller's backup limit). */
  setConfiguration(id: number, value: unknown): StoredConfiguration {
    this.controller(id);
    const text = exportText(checkConfiguration(value));
    const size = Buffer.byteLength(text);
    if (size > MAX_EXPORT_BYTES) throw ConfiguratorError.tooLarge(size, MAX_EXPORT_BYTES);
    this.db.prepare('UPDATE controllers SET configuration = ?, updated_at = ? WHERE id = ?').run(text, new Date().toISOString(), id);
    return this.configuration(id);
  }

  records(id: number): RecordSummary[] {
    this.controller(id);
    const rows = this.db.prepare('SELECT kind, uuid, body FROM records WHERE controller_id = ? ORDER BY kind, uuid').all(id) as { kind: RecordKind; uuid: string; body: string }[];
    return rows.map((r) => {
      const body = JSON.parse(r.body) as Record<string, unknown>;
      return { kind: r.kind, uuid: r.uuid, name: typeof body.name === 'string' ? body.name : '', mac: String(body[MAC_FIELD[r.kind]]) };
    });
  }

  /** The bodies as the controller takes them (PUT /api/{kind}/{uuid}). */
  recordBodies(id: number): { kind: RecordKind; uuid: string; body: string }[] {
    return this.db.prepare('SELECT kind, uuid, body FROM records WHERE controller_id = ? ORDER BY kind, uuid').all(id) as { kind: RecordKind; uuid: string; body: string }[];
  }

  putRecord(id: number, kind: unknown, uuid: unknown, body: unknown): RecordSummary {
    this.controller(id);
    const r = checkRecord(kind, uuid, body);
    this.db.prepare('INSERT INTO records (controller_id, kind, uuid, body) VALUES (?, ?, ?, ?) ON CONFLICT (controller_id, kind, uuid) DO UPDATE SET body = excluded.body').run(id, r.kind, r.uuid, JSON.stringify(r.body));
    return this.records(id).find((s) => s.kind === r.kind && s.uuid === r.uuid)!;
  }

  /** When each record of a controller was last provisioned (ISO 8601), by `kind/uuid`; records never provisioned are absent. */
  provisionedAt(id: number): Map<string, string> {
    const rows = this.db.prepare('SELECT kind, uuid, provisioned_at FROM records WHERE controller_id = ? AND provisioned_at IS NOT NULL').all(id) as { kind: RecordKind; uuid: string; provisioned_at: string }[];
    return new Map(rows.map((r) => [`${r.kind}/${r.uuid}`, r.provisioned_at]));
  }

  /** Notes a provisioning the controller logged; an older one than what is kept changes nothing. */
  markProvisioned(id: number, kind: RecordKind, uuid: string, at: string): void {
    this.db.prepare('UPDATE records SET provisioned_at = ? WHERE controller_id = ? AND kind = ? AND uuid = ? AND (provisioned_at IS NULL OR provisioned_at < ?)').run(at, id, kind, uuid, at);
  }

  removeRecord(id: number, kind: string, uuid: string): void {
    this.controller(id);
    if (this.db.prepare('DELETE FROM records WHERE controller_id = ? AND kind = ? AND uuid = ?').run(id, kind, uuid).changes === 0) {
      throw new ConfiguratorError('record_not_found', `No ${kind === 'clients' ? 'client' : 'controller'} record ${uuid} for this controller`);
    }
  }

  /** A Pull: the controller's configuration and records, in one transaction (all or nothing). */
  importPulled(id: number, configuration: Configuration, records: { kind: RecordKind; uuid: string; body: unknown }[]): void {
    const checked = records.map((r) => checkRecord(r.kind, r.uuid, r.body));
    this.db.transaction(() => {
      this.setConfiguration(id, configuration);
      for (const r of checked) this.putRecord(id, r.kind, r.uuid, r.body);
    })();
  }

  clientSettings(): ClientSettings | null {
    const row = this.db.prepare("SELECT value FROM settings WHERE key = 'client'").get() as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as ClientSettings) : null;
  }

  setClientSettings(value: ClientSettingsInput): ClientSettings {
    const s = checkClientSettings(value);
    this.db.prepare("INSERT INTO settings (key, value) VALUES ('client', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(JSON.stringify(s));
    return s;
  }

  private uniqueName(err: unknown, name: string): Error {
    if (err instanceof Error && /UNIQUE constraint failed: controllers\.name/.test(err.message)) return new ConfiguratorError('name_taken', `Another controller of this site is named ${JSON.stringify(name)}`, { field: 'name' });
    return err as Error;
  }
}

/** The site file cannot be opened as a site (exit code 4 at the command line). */
export class SiteFileError extends Error {
  override name = 'SiteFileError';
}
