// Record UUIDs and the flash layer (docs/storage.md): a path is percent-decoded once, per segment, by
// the core's router; UUIDs follow a strict grammar, so "." and ".." (however encoded) and temporary
// names never reach the flash; temporary files are never listed or allowlisted, and the boot repair
// removes them; the event log lives on the flash and survives a reboot.
import { utf8Encode } from '../src/core/bytes.ts';
import { isUuid } from '../src/core/ids.ts';
import { EVENT_LOG_CAPACITY } from '../src/core/event-log.ts';
import { MemoryStorage } from '../src/platform/memory/storage.ts';
import { deepEqual, equal, ok, type TestCase } from './assert.ts';
import { ADMIN_PASSWORD, bench, board, call, login, type Bench, type TestBoard } from './fixtures.ts';

const clientBody = (mac: string) => ({
  mac,
  wifi: { ssid: 'plant-floor', password: 'wifi-secret-123' },
  mqtt: { host: 'broker.local', port: 8883 },
  ca_certificate: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
});

/** Every file on the flash except the event log's entries (which a request may add). */
function files(s: MemoryStorage): string {
  return JSON.stringify([...s.files.keys()].filter((p) => !p.startsWith('/log/')).sort());
}

const FUSE = '5a'.repeat(32);

/** The same board (same UUID and fuse key) booted again on the same flash: a power cycle. */
async function reboot(b: Bench, tb: TestBoard): Promise<TestBoard> {
  const again = board(b, { role: tb.identity.role, uuid: tb.identity.uuid, storage: tb.storage, fuseKeyHex: FUSE });
  await again.device.boot();
  return again;
}

const DOT_PATHS = ['%252e', '%252e%252e', '%252E%252E', '%2e', '%2e%2e', '%2E%2e', '.', '..', '%252e.tmp', 'x.tmp', '..tmp', 'a%2Fb', 'a%252Fb', '%2e%2e%2f%2e%2e%2fbackup.json'];

export const storagePathCases: TestCase[] = [
  {
    name: 'record UUIDs: a strict grammar (letters, digits, "-" and "_", 1 to 64) that every UUID in use fits',
    async run() {
      for (const good of ['1a0c0000-0000-4000-8000-000000000021', '5C0E1A00-0000-4000-8000-000000000001', 'lamp-0', 'ctl-xs-0001', 'bench-ctl-12', 'client-extra-3', 'stale_client', 'd', 'x'.repeat(64)]) {
        ok(isUuid(good), `${good} to be a UUID`);
      }
      for (const bad of ['', '.', '..', '...', '.hidden', 'a.tmp', 'lamp-0.tmp', 'a:b', 'a/b', 'a\\b', '%2e', 'a b', '-lead', '_lead', 'x'.repeat(65), 'é']) {
        ok(!isUuid(bad), `${JSON.stringify(bad)} not to be a UUID`);
      }
    },
  },
  {
    name: '"." and ".." in a record path, encoded once, twice or not at all: 400 with a JSON error, nothing written',
    async run() {
      const c = board(bench(), { role: 'controller' });
      await c.device.boot();
      const auth = await login(c);
      const before = files(c.storage);
      for (const kind of ['clients', 'controllers']) {
        for (const p of DOT_PATHS) {
          for (const method of ['PUT', 'GET', 'DELETE']) {
            const body = method === 'PUT' ? (kind === 'clients' ? clientBody('02:00:00:00:00:2E') : { ethernet_mac: '02:00:00:00:00:2E' }) : undefined;
            const r = await call(c, method, `/api/${kind}/${p}`, { headers: auth, ...(body ? { body } : {}) });
            equal(r.status, 400, `${method} /api/${kind}/${p}`);
            equal(r.headers['content-type'], 'application/json', `${method} /api/${kind}/${p} content type`);
            equal(r.json?.error, 'invalid_uuid', `${method} /api/${kind}/${p} error code`);
            ok(typeof r.json?.message === 'string' && r.json.message.length > 0, 'a message');
          }
        }
        deepEqual((await call(c, 'GET', `/api/${kind}`, { headers: auth })).json, [], `nothing listed in ${kind}`);
      }
      equal(files(c.storage), before, 'no file created on the flash');
      const bad = await call(c, 'GET', '/api/clients/%zz', { headers: auth });
      equal(bad.status, 400, 'malformed percent-encoding');
      equal(bad.json?.error, 'invalid_path', 'its error code');
    },
  },
  {
    name: 'the router decodes each segment exactly once: "ctl%2D0" is ctl-0, "ctl%252D0" is not',
    async run() {
      const c = board(bench(), { role: 'controller' });
      await c.device.boot();
      const auth = await login(c);
      const put = await call(c, 'PUT', '/api/controllers/ctl%2D0', { headers: auth, body: { ethernet_mac: '02:00:00:00:00:01' } });
      equal(put.status, 201, `PUT with an encoded "-" (${put.text})`);
      deepEqual((await call(c, 'GET', '/api/controllers', { headers: auth })).json, ['ctl-0'], 'stored as ctl-0');
      equal((await call(c, 'GET', '/api/controllers/ctl-0', { headers: auth })).json?.ethernet_mac, '02:00:00:00:00:01', 'read back plain');
      equal((await call(c, 'GET', '/api/controllers/ctl%252D0', { headers: auth })).status, 400, 'never decoded twice');
      equal((await call(c, 'GET', '/api/%63ontrollers', { headers: auth })).status, 200, 'a fixed segment decoded too');
    },
  },
  {
    name: 'a leftover temporary record file is neither listed nor allowlisted, and the boot repair removes it',
    async run() {
      const b = bench();
      const c = board(b, { role: 'controller', fuseKeyHex: FUSE });
      await c.device.boot();
      const auth = await login(c);
      // Records written as the firmware writes them, then left under temporary names, as a power cut
      // between the write and the rename leaves them (and `..tmp`, what "." once became).
      c.device.records.put('clients', 'lamp-7', JSON.stringify({ mac: '02:00:00:00:00:07' }));
      c.device.records.put('clients', 'lamp-8', JSON.stringify({ mac: '02:00:00:00:00:08' }));
      c.device.records.put('controllers', 'ctl-9', JSON.stringify({ ethernet_mac: '02:00:00:00:00:09' }));
      c.storage.rename('/records/clients/lamp-7', '/records/clients/lamp-7.tmp');
      c.storage.rename('/records/clients/lamp-8', '/records/clients/..tmp');
      c.storage.rename('/records/controllers/ctl-9', '/records/controllers/ctl-9.tmp');
      for (const [path, text] of [['/config/cloud.json.tmp', '{"url":"http://127.0.0.1:1"}'], ['/backup.json.tmp', '{"half":'], ['/log/0000000099.tmp', '{"time"']] as const) {
        const f = c.storage.create(path);
        f.write(utf8Encode(text));
        f.close();
      }
      deepEqual((await call(c, 'GET', '/api/clients', { headers: auth })).json, [], 'no client listed');
      deepEqual((await call(c, 'GET', '/api/controllers', { headers: auth })).json, [], 'no controller listed');
      equal(c.device.records.allowlist().size, 0, 'no MAC allowlisted');
      const on = await call(c, 'PUT', '/api/provisioning', { headers: auth });
      equal(on.status, 200, 'provisioning mode on');
      equal(on.json.allowlist_size, 0, 'the allowlist the mode uses is empty');
      const exchange = await call(c, 'POST', '/api/provisioning/token', { iface: 'softap', stationMac: '02:00:00:00:00:07', body: { uuid: 'lamp-7', mac: '02:00:00:00:00:07' } });
      equal(exchange.status, 404, 'no token for a temporary file');
      equal((await call(c, 'GET', '/api/clients/lamp-7', { headers: auth })).status, 404, 'not readable by UUID');

      const again = await reboot(b, c);
      for (const path of ['/records/clients/lamp-7.tmp', '/records/clients/..tmp', '/records/controllers/ctl-9.tmp', '/config/cloud.json.tmp', '/backup.json.tmp', '/log/0000000099.tmp']) {
        equal(again.storage.size(path), null, `${path} removed at boot`);
      }
      ok(![...again.storage.files.keys()].some((p) => p.endsWith('.tmp')), 'no temporary file anywhere');
      deepEqual((await call(again, 'GET', '/api/clients', { headers: await login(again) })).json, [], 'still nothing listed');
    },
  },
  {
    name: 'one backup is written at a time: a second PUT meanwhile answers 409 backup_busy, the first lands whole',
    async run() {
      const c = board(bench(), { role: 'controller' });
      await c.device.boot();
      const auth = await login(c);
      const first = JSON.stringify({ outputs: Array.from({ length: 400 }, (_, i) => ({ id: i, name: `Light ${i}` })) });
      const slow = call(c, 'PUT', '/backup', { headers: auth, body: first, chunkBytes: 64 });
      const second = await call(c, 'PUT', '/backup', { headers: auth, body: '{"second":true}' });
      equal(second.status, 409, 'the second PUT while the first streams');
      equal(second.json?.error, 'backup_busy', 'its error code');
      equal((await slow).status, 200, 'the first PUT');
      equal((await call(c, 'GET', '/backup', { headers: auth })).text, first, 'the first backup, whole');
      equal((await call(c, 'PUT', '/backup', { headers: auth, body: '{"third":true}' })).status, 200, 'a PUT after it');
    },
  },
  {
    name: 'the event log is on the flash: it survives a reboot and keeps the newest 64 entries',
    async run() {
      const b = bench();
      const c = board(b, { role: 'controller', fuseKeyHex: FUSE });
      await c.device.boot();
      for (let i = 0; i < EVENT_LOG_CAPACITY + 10; i++) c.device.log('info', 'test', `entry ${i}`);
      const entries = [...c.storage.files.keys()].filter((p) => p.startsWith('/log/'));
      equal(entries.length, EVENT_LOG_CAPACITY, 'entries on the flash');
      const again = await reboot(b, c);
      const recent = again.hal.eventLog.recent(EVENT_LOG_CAPACITY);
      equal(recent.length, EVENT_LOG_CAPACITY, 'entries after the reboot');
      const last = recent.findIndex((e) => e.message === `entry ${EVENT_LOG_CAPACITY + 9}`);
      ok(last >= 0, 'the last entry before the reboot');
      ok(recent.slice(last + 1).some((e) => e.source === 'boot' && e.message.startsWith(`controller ${c.identity.uuid}`)), 'then the boot line');
      ok(recent.slice(0, last).every((e, i, all) => i === 0 || e.time >= all[i - 1]!.time), 'oldest first');
      equal(again.hal.eventLog.recent(3).length, 3, 'recent(3)');
      equal(again.hal.eventLog.recent(0).length, 0, 'recent(0)');
      ok((await call(again, 'POST', '/api/login', { body: { password: ADMIN_PASSWORD } })).status === 200, 'the board answers');
    },
  },
];
