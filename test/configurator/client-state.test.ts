// A provisioned client's row and the cloud's backup, as the configurator's server reports them, over
// real sockets: a stand-in controller on 127.0.0.1 says what its event log and its cloud hold, and a
// real MQTT broker (aedes) holds what the clients said there (retained status messages, published
// here as a client's firmware publishes them). What the controller logged is kept in the site once
// seen; a broker that cannot be reached, or a controller that answers outside its API, is a problem
// named in the answer, never a 500.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConfigurator, type RunningConfigurator } from '../../configurator/server/app.ts';
import { SiteStore } from '../../configurator/server/site-store.ts';
import { clientStatusTopic } from '../../firmware/src/core/provisioning/client-mqtt.ts';
import { tokenIssuedMessage } from '../../firmware/src/core/provisioning/tokens.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { startBroker, type Broker } from '../../harness/broker.ts';
import { startStandInController, type StandInController } from './stand-in-controller.ts';
import { pageClient } from '../helpers/configurator-page-client.ts';

let dir: string;
let running: RunningConfigurator;
let ctl: StandInController;
let broker: Broker;
let id: number;
const LAMP = { uuid: 'lamp-kitchen-1', mac: '24:0A:C4:10:00:41', name: 'Kitchen' };
const SPARE = { uuid: 'lamp-spare-2', mac: '24:0A:C4:10:00:42', name: 'Spare' };
/** When the stand-in's log says LAMP took its token. */
const ISSUED_MS = Date.UTC(2026, 10, 28, 9, 30, 0);

const call = pageClient(() => running.url);

/** A client's retained status on the broker, as its firmware leaves it (firmware/src/core/provisioning/client.ts). */
async function retain(uuid: string, payload: string): Promise<void> {
  const c = await connectAsync({ host: broker.host, port: broker.port, clientId: `firmware-${uuid}` });
  await c.publishAsync(clientStatusTopic(uuid), payload, { retain: true, qos: 1 });
  await c.endAsync();
}

const events = (list: { time: number; message: string }[]) => ({ status: 200, body: { events: list.map((e) => ({ ...e, level: 'info', source: 'api' })) } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'configurator-clients-'));
  running = await startConfigurator({ site: join(dir, 'site.db'), link: { timeoutMs: 2_000 } });
  ctl = await startStandInController();
  broker = await startBroker('aedes', 0);
  id = (await call('POST', '/api/controllers', { name: 'Hall', address: ctl.url })).json.id;
  expect((await call('PUT', '/api/site/client-settings', { wifi: { ssid: 'plant-floor', password: 'plant-floor-wpa2' }, mqtt: { host: broker.host, port: broker.port, tls: false }, ca_certificate: TEST_CA_PEM })).status).toBe(200);
  for (const c of [LAMP, SPARE]) expect((await call('POST', `/api/controllers/${id}/records`, { kind: 'clients', ...c })).status).toBe(201);
});

afterAll(async () => {
  await running?.close();
  await ctl?.close();
  await broker?.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe('a client\'s row: provisioned when the controller says, connected when the client says', () => {
  it('not logged in: nothing provisioned yet; the broker has heard from neither', async () => {
    expect(await call('GET', `/api/controllers/${id}/clients`)).toEqual({
      status: 200,
      json: {
        broker: `${broker.host}:${broker.port}`,
        problems: [],
        clients: [
          { uuid: LAMP.uuid, name: 'Kitchen', mac: LAMP.mac, provisioned_at: null, mqtt: 'not_seen', version: null },
          { uuid: SPARE.uuid, name: 'Spare', mac: SPARE.mac, provisioned_at: null, mqtt: 'not_seen', version: null },
        ],
      },
    });
  });

  it('the controller logged the token; the client said online: both shown, and the site keeps the time after the log moved on', async () => {
    expect((await call('POST', `/api/controllers/${id}/login`, { password: 'any-password' })).status).toBe(200);
    // Another MAC for the same UUID, and a line logged before the clock was set, say nothing.
    ctl.answer('GET /api/events', events([
      { time: 5_000, message: tokenIssuedMessage(SPARE.mac, 'clients', SPARE.uuid) },
      { time: ISSUED_MS - 60_000, message: tokenIssuedMessage('24:0A:C4:10:00:99', 'clients', LAMP.uuid) },
      { time: ISSUED_MS, message: tokenIssuedMessage(LAMP.mac, 'clients', LAMP.uuid) },
    ]));
    await retain(LAMP.uuid, JSON.stringify({ state: 'online', version: '2026.11.03' }));
    await retain(SPARE.uuid, 'not json');
    await retain('lamp-other', JSON.stringify({ state: 'online', version: '2026.11.03' }));
    const first = await call('GET', `/api/controllers/${id}/clients`);
    expect(first.json.problems).toEqual([]);
    expect(first.json.clients).toEqual([
      { uuid: LAMP.uuid, name: 'Kitchen', mac: LAMP.mac, provisioned_at: new Date(ISSUED_MS).toISOString(), mqtt: 'online', version: '2026.11.03' },
      { uuid: SPARE.uuid, name: 'Spare', mac: SPARE.mac, provisioned_at: null, mqtt: 'not_seen', version: null },
    ]);
    ctl.answer('GET /api/events', events([]));
    // Its will, as the broker publishes it; and a version that is no firmware's is not shown.
    await retain(LAMP.uuid, JSON.stringify({ state: 'offline' }));
    await retain(SPARE.uuid, JSON.stringify({ state: 'online', version: `<img src=x onerror=alert(1)> ${'x'.repeat(100)}` }));
    const later = await call('GET', `/api/controllers/${id}/clients`);
    expect(later.json.clients[0]).toMatchObject({ provisioned_at: new Date(ISSUED_MS).toISOString(), mqtt: 'offline', version: null });
    expect(later.json.clients[1]).toMatchObject({ provisioned_at: null, mqtt: 'online', version: null });
    expect(running.store.provisionedAt(id)).toEqual(new Map([[`clients/${LAMP.uuid}`, new Date(ISSUED_MS).toISOString()]]));
  });

  it('an event log outside the API\'s contract and a broker that is gone are named; the rest is still answered', async () => {
    ctl.answer('GET /api/events', { status: 200, body: { events: 'none' } });
    const port = broker.port;
    await broker.close();
    const r = await call('GET', `/api/controllers/${id}/clients`);
    expect(r.status).toBe(200);
    expect(r.json.problems).toHaveLength(2);
    expect(r.json.problems[0]).toMatch(/^Hall answered GET \/api\/events with status 200 but not /);
    expect(r.json.problems[1]).toMatch(new RegExp(`^The MQTT broker 127\\.0\\.0\\.1:${port} cannot be reached: `));
    expect(r.json.clients.map((c: { mqtt: string }) => c.mqtt)).toEqual(['unknown', 'unknown']);
    expect(r.json.clients[0].provisioned_at).toBe(new Date(ISSUED_MS).toISOString());
  });

  it('an unknown controller is 404', async () => {
    expect(await call('GET', '/api/controllers/999/clients')).toMatchObject({ status: 404, json: { error: 'controller_not_found' } });
  });
});

describe('the cloud\'s backup, read through the controller', () => {
  const info = (body: unknown) => ctl.answer('GET /api/cloud-backup/info', { status: 200, body });

  it('the cloud\'s ETag and date, against the controller\'s backup and the site\'s export', async () => {
    const site = running.store.configuration(id).etag;
    info({ stored: true, etag: site, last_backup_date: '2026-11-28T09:31:00.000Z', same_as_local: false });
    expect(await call('GET', `/api/controllers/${id}/cloud-backup`)).toEqual({
      status: 200,
      json: { stored: true, etag: site, last_backup_date: '2026-11-28T09:31:00.000Z', same_as_controller: false, same_as_site: true },
    });
    info({ stored: true, etag: 'ab'.repeat(32), last_backup_date: null, same_as_local: true });
    expect((await call('GET', `/api/controllers/${id}/cloud-backup`)).json).toEqual({ stored: true, etag: 'ab'.repeat(32), last_backup_date: null, same_as_controller: true, same_as_site: false });
    info({ stored: false });
    expect((await call('GET', `/api/controllers/${id}/cloud-backup`)).json).toEqual({ stored: false, etag: null, last_backup_date: null, same_as_controller: false, same_as_site: false });
  });

  it('an answer outside the contract is a 502; the device\'s own refusals are relayed with their code; logged out is 401', async () => {
    info({ stored: 'yes' });
    expect(await call('GET', `/api/controllers/${id}/cloud-backup`)).toMatchObject({ status: 502, json: { error: 'controller_bad_answer' } });
    ctl.answer('GET /api/cloud-backup/info', { status: 503, body: { error: 'clock_not_synchronized', message: 'The device clock is not synchronized' } });
    // A controller's 5xx is relayed as the configurator's 502 (the configurator itself is up), with its code and status.
    expect(await call('GET', `/api/controllers/${id}/cloud-backup`)).toEqual({
      status: 502,
      json: { error: 'clock_not_synchronized', message: 'Hall: The device clock is not synchronized', details: { controller_status: 503 } },
    });
    expect((await call('POST', `/api/controllers/${id}/logout`)).status).toBe(204);
    expect(await call('GET', `/api/controllers/${id}/cloud-backup`)).toMatchObject({ status: 401, json: { error: 'not_logged_in' } });
  });
});

describe('a site file written before provisioning times were kept', () => {
  it('opens (schema 1 to 2), keeps its records, and has no time for them until the controller is read', () => {
    const path = join(dir, 'schema-1.db');
    // Schema 1 as the configurator wrote it (site-store.ts MIGRATIONS[0]), with one client record.
    const old = new Database(path);
    old.exec(`CREATE TABLE controllers (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, address TEXT NOT NULL, hardware_class TEXT NOT NULL, configuration TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE TABLE records (controller_id INTEGER NOT NULL REFERENCES controllers (id) ON DELETE CASCADE, kind TEXT NOT NULL CHECK (kind IN ('controllers', 'clients')), uuid TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (controller_id, kind, uuid));
      CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);`);
    old.prepare("INSERT INTO controllers VALUES (1, 'Hall', 'http://192.168.1.20', 'ctl-s3', '{}', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')").run();
    old.prepare("INSERT INTO records VALUES (1, 'clients', ?, ?)").run(LAMP.uuid, JSON.stringify({ name: 'Kitchen', mac: LAMP.mac }));
    old.pragma(`application_id = ${0x46_43_53_31}`);
    old.pragma('user_version = 1');
    old.close();
    const site = SiteStore.open(path);
    try {
      expect(site.records(1)).toEqual([{ kind: 'clients', uuid: LAMP.uuid, name: 'Kitchen', mac: LAMP.mac }]);
      expect(site.provisionedAt(1)).toEqual(new Map());
      site.markProvisioned(1, 'clients', LAMP.uuid, '2026-11-28T09:30:00.000Z');
      site.markProvisioned(1, 'clients', LAMP.uuid, '2026-11-27T09:30:00.000Z');
      expect(site.provisionedAt(1)).toEqual(new Map([[`clients/${LAMP.uuid}`, '2026-11-28T09:30:00.000Z']]));
    } finally {
      site.close();
    }
  });
});
