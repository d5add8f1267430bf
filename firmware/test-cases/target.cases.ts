// The controller-provisioning target procedure (spec 3.6): every row of the outcome table, the
// refusals, and the reboot into normal mode with the same records.
import { utf8Decode, utf8Encode } from '../src/core/bytes.ts';
import { deriveStorageKey } from '../src/core/crypto/device-keys.ts';
import { decryptFfce } from '../src/core/crypto/ffce.ts';
import { jsonResponse } from '../src/core/http/respond.ts';
import { controllerConfiguration, eventLogPage, PROVISIONING_INCOMPLETE_PATH, wrapWords } from '../src/core/provisioning/target.ts';
import { Device } from '../src/core/device.ts';
import { MAC_FIELD } from '../src/core/records.ts';
import { createMemoryBoard } from '../src/platform/memory/board.ts';
import { equal, deepEqual, ok, type TestCase } from './assert.ts';
import { bench, board, call, clientConfig, login, seedSource, type Bench, type TestBoard } from './fixtures.ts';

/** What an interrupted earlier provisioning leaves: some copied records and the marker. */
function leftovers(target: TestBoard, uuid: string): void {
  target.device.records.put('clients', uuid, JSON.stringify(clientConfig('02:00:00:00:00:01')));
  target.storage.files.set(PROVISIONING_INCOMPLETE_PATH, utf8Encode(target.identity.uuid));
}

const TARGET_FUSE = '7a'.repeat(32);

/** Bytes as one char each, to look for ASCII text in a file. */
const latin1 = (b: Uint8Array) => Array.from(b, (x) => String.fromCharCode(x)).join('');

const BACKUP = JSON.stringify({ inputs: [], outputs: [{ id: 1, name: 'Deck light' }], mqtt: { host: 'broker.local', port: 8883 } });

async function rig(o: { controllers?: number; clients?: number; backup?: string | null; registerTarget?: boolean } = {}) {
  const b: Bench = bench();
  const source = board(b, { role: 'controller' });
  const target = board(b, { role: 'controller', fuseKeyHex: TARGET_FUSE });
  await source.device.boot();
  await seedSource(source, { ...(o.registerTarget === false ? {} : { target }), controllers: o.controllers ?? 2, clients: o.clients ?? 3, backup: o.backup === undefined ? BACKUP : o.backup });
  const auth = await login(source);
  return { b, source, target, auth };
}

async function enable(source: TestBoard, auth: Record<string, string>) {
  const r = await call(source, 'PUT', '/api/provisioning', { headers: auth });
  equal(r.status, 200, 'provisioning mode on');
}

export const targetCases: TestCase[] = [
  {
    name: 'all counts match, backup received: "Prov OK 3C 3L" / "Prov OK got backup", reboot after 5 s, same records after',
    async run() {
      const { b, source, target, auth } = await rig();
      // The target has leftovers of an interrupted provisioning: cleanup happens after the token.
      leftovers(target, 'stale-client');
      await enable(source, auth);
      const boot = await target.device.boot();
      ok(boot.role === 'controller' && boot.provisioning.kind === 'finished', 'the procedure to finish');
      deepEqual(target.display.lines, ['Prov OK 3C 3L', 'Prov OK got backup'], 'OLED');
      ok(target.events.some((e) => e.message === 'Prov OK 3C 3L / Prov OK got backup'), 'event log line');
      equal(target.radio.currentStationMac(), target.identity.ethernetMac, 'the station MAC was the Ethernet MAC');
      deepEqual(target.device.records.list('clients'), source.device.records.list('clients'), 'client records');
      deepEqual(target.device.records.list('controllers'), source.device.records.list('controllers'), 'controller records');
      equal(target.device.local.etag(), source.device.local.etag(), 'backup ETag');
      equal(target.storage.size(PROVISIONING_INCOMPLETE_PATH), null, 'the copy is complete: no marker');
      equal(target.reboots.length, 0, 'no reboot before 5 s');
      await b.clock.advance(4999);
      equal(target.reboots.length, 0, 'still showing the result');
      await b.clock.advance(1);
      deepEqual(target.reboots, ['provisioned'], 'rebooted');
      // Records are encrypted at rest with the target's own key, not copied as bytes: every file
      // decrypts with the key derived from the target's fuse, and with no other key.
      const targetKey = deriveStorageKey((m) => target.hal.fuse.hmac(m));
      const sourceKey = deriveStorageKey((m) => source.hal.fuse.hmac(m));
      for (const kind of ['controllers', 'clients'] as const) {
        for (const uuid of source.device.records.list(kind)) {
          const path = `/records/${kind}/${uuid}`;
          const blob = target.storage.read(path, 0, target.storage.size(path) ?? 0);
          equal(blob.slice(0, 4).join(','), '70,70,67,69', `${path}: FFCE framing at rest`);
          const plain = utf8Decode(decryptFfce(target.hal.crypto, targetKey, blob));
          equal(plain, source.device.records.getText(kind, uuid), `${path}: decrypts with the target's key to the source's record`);
          ok(!latin1(blob).includes(String(JSON.parse(plain)[MAC_FIELD[kind]])), `${path}: no plaintext MAC in the file`);
          for (const [name, key] of [['an all-zero key', new Uint8Array(32)], ["the source's key", sourceKey]] as const) {
            let opened = true;
            try {
              decryptFfce(target.hal.crypto, key, blob);
            } catch {
              opened = false;
            }
            ok(!opened, `${path}: not decryptable with ${name}`);
          }
        }
      }
      // Normal mode after the reboot: configured, no provisioning.
      const again = await target.device.boot();
      ok(again.role === 'controller' && again.provisioning.kind === 'configured', 'configured after reboot');
    },
  },
  {
    name: 'step 6: the requests in order (lists, then each record, then /backup), all via the SoftAP, each record written before the next is asked for',
    async run() {
      const { source, target, auth } = await rig({ controllers: 2, clients: 3 });
      await enable(source, auth);
      const seen: { method: string; path: string; iface: string; stationMac?: string; token: boolean; writtenBefore: number }[] = [];
      const written = () => target.device.records.list('controllers').length + target.device.records.list('clients').length;
      const handle = source.device.handle.bind(source.device);
      source.device.handle = (r) => {
        seen.push({ method: r.method, path: r.path, iface: r.iface, ...(r.stationMac ? { stationMac: r.stationMac } : {}), token: 'provisioning-token' in r.headers, writtenBefore: written() });
        return handle(r);
      };
      await target.device.boot();
      const controllers = source.device.records.list('controllers');
      const clients = source.device.records.list('clients');
      deepEqual(
        seen.map((r) => `${r.method} ${r.path}`),
        [
          'POST /api/provisioning/token',
          'GET /api/controllers',
          ...controllers.map((u) => `GET /api/controllers/${u}`),
          'GET /api/clients',
          ...clients.map((u) => `GET /api/clients/${u}`),
          'GET /backup',
        ],
        'the order of spec 3.6 step 6',
      );
      ok(seen.every((r) => r.iface === 'softap' && r.stationMac === target.identity.ethernetMac), 'every request via the SoftAP, from the Ethernet MAC');
      ok(seen.slice(1).every((r) => r.token), 'every request after the exchange carries the provisioning-token');
      // One record in memory at a time: when record n+1 is asked for, records 1..n are on flash.
      const recordRequests = seen.filter((r) => /^\/api\/(controllers|clients)\/./.test(r.path));
      deepEqual(recordRequests.map((r) => r.writtenBefore), recordRequests.map((_r, i) => i), 'records written before the next request');
      equal(seen.at(-1)!.writtenBefore, controllers.length + clients.length, 'all written before /backup');
    },
  },
  {
    name: 'the station MAC override (step 2) lasts until reboot: a board powered up again on the same flash uses its Wi-Fi MAC and does not override it',
    async run() {
      const { b, source, target, auth } = await rig();
      await enable(source, auth);
      await target.device.boot();
      equal(target.radio.currentStationMac(), target.identity.ethernetMac, 'overridden during provisioning');
      await b.clock.advance(5000);
      deepEqual(target.reboots, ['provisioned'], 'rebooted');
      // Power-up: new RAM and a radio back at its factory MAC; the same flash and identity.
      const again = createMemoryBoard({ identity: target.identity, fuseKeyHex: TARGET_FUSE, air: b.air, clock: b.clock, storage: target.storage, seed: 99 });
      const overrides: string[] = [];
      const set = again.radio.setStationMac.bind(again.radio);
      again.radio.setStationMac = (m) => {
        overrides.push(m);
        set(m);
      };
      const device = new Device(again.hal, {});
      const boot = await device.boot();
      ok(boot.role === 'controller' && boot.provisioning.kind === 'configured', 'configured after the reboot');
      deepEqual(overrides, [], 'no override at a normal boot');
      equal(again.radio.currentStationMac(), target.identity.wifiMac, 'the station MAC is the Wi-Fi MAC again');
      equal(device.records.list('clients').length, 3, 'the records survived on flash');
    },
  },
  {
    name: 'no backup on the source: "Prov OK 3C 2L" / "Prov OK no backup", and a reboot',
    async run() {
      const { b, source, target, auth } = await rig({ clients: 2, backup: null });
      await enable(source, auth);
      await target.device.boot();
      deepEqual(target.display.lines, ['Prov OK 3C 2L', 'Prov OK no backup'], 'OLED');
      await b.clock.advance(5000);
      deepEqual(target.reboots, ['provisioned'], 'rebooted');
    },
  },
  {
    name: 'controller count mismatch: "Prov fail C 2/3", no reboot, OLED on the event log',
    async run() {
      const { b, source, target, auth } = await rig();
      // One controller record on the source cannot be read (its file is damaged).
      source.storage.files.set('/records/controllers/ctl-extra-0', new Uint8Array([70, 70, 67, 69, 1, 2, 3]));
      await enable(source, auth);
      const boot = await target.device.boot();
      ok(boot.role === 'controller' && boot.provisioning.kind === 'finished' && !boot.provisioning.ok, 'a failed outcome');
      ok(target.display.history.some((l) => l.length === 1 && l[0] === 'Prov fail C 2/3'), 'OLED showed the failure');
      ok(target.events.some((e) => e.level === 'error' && e.message === 'Prov fail C 2/3'), 'event log');
      await b.clock.advance(10_000);
      equal(target.reboots.length, 0, 'no reboot');
      ok(target.display.lines.some((l) => l.includes('Prov fail C 2/3')), 'the event log page shows it');
    },
  },
  {
    name: 'a hostile source serving a record nested 5,000 deep: the target refuses that record ("Prov fail L 3/4") and keeps running',
    async run() {
      const { b, source, target, auth } = await rig();
      // Written past the source's own API, which would refuse it: what a hostile source could serve.
      source.device.records.put('clients', 'client-deep-1', '['.repeat(5000) + ']'.repeat(5000));
      await enable(source, auth);
      await target.device.boot();
      ok(target.display.history.some((l) => l[0] === 'Prov fail L 3/4'), `OLED: ${JSON.stringify(target.display.history.at(-1))}`);
      equal(target.device.records.has('clients', 'client-deep-1'), false, 'the deep record is not stored');
      ok(target.events.some((e) => /client-deep-1/.test(e.message) && /nested too deeply/.test(e.message)), 'logged why');
      await b.clock.advance(10_000);
      equal(target.reboots.length, 0, 'no reboot');
    },
  },
  {
    name: 'client count mismatch: "Prov fail L 2/3"',
    async run() {
      const { b, source, target, auth } = await rig();
      source.storage.files.set('/records/clients/client-extra-1', new Uint8Array(40));
      await enable(source, auth);
      await target.device.boot();
      ok(target.display.history.some((l) => l[0] === 'Prov fail L 2/3'), 'OLED');
      await b.clock.advance(10_000);
      equal(target.reboots.length, 0, 'no reboot');
    },
  },
  {
    name: 'a backup that is not JSON: "Prov OK 3C 3L" / "Prov bad backup", no reboot, no backup kept',
    async run() {
      const { b, source, target, auth } = await rig({ backup: '{"inputs": [1, 2,' });
      await enable(source, auth);
      await target.device.boot();
      ok(target.display.history.some((l) => l[0] === 'Prov OK 3C 3L' && l[1] === 'Prov bad backup'), 'OLED');
      equal(target.device.local.size(), null, 'no backup written');
      await b.clock.advance(10_000);
      equal(target.reboots.length, 0, 'no reboot');
    },
  },
  {
    name: 'target MAC not in the allowlist: the source shuts its SoftAP down, the target stays unprovisioned',
    async run() {
      const { b, source, target, auth } = await rig({ registerTarget: false });
      await enable(source, auth);
      const boot = await target.device.boot();
      ok(boot.role === 'controller' && boot.provisioning.kind === 'connect_failed', `connect_failed (got ${JSON.stringify(boot.provisioning)})`);
      equal(b.air.aps.size, 0, 'SoftAP down');
      ok(source.events.some((e) => e.level === 'warning' && e.message.includes(target.identity.ethernetMac!)), 'source warning names the MAC');
      equal(target.device.records.list('clients').length, 0, 'nothing copied');
    },
  },
  {
    name: 'unknown target UUID: 404 on the exchange, nothing deleted on the target',
    async run() {
      const { source, target, auth } = await rig();
      // The source knows the target's MAC under another UUID.
      await call(source, 'DELETE', `/api/controllers/${target.identity.uuid}`, { headers: auth });
      await call(source, 'PUT', '/api/controllers/someone-else', { headers: auth, body: { ethernet_mac: target.identity.ethernetMac } });
      leftovers(target, 'keep-me');
      const w = target.device.local.begin();
      w.write(utf8Encode('{"keep":"me"}'));
      w.commit();
      await enable(source, auth);
      const boot = await target.device.boot();
      ok(boot.role === 'controller' && boot.provisioning.kind === 'token_refused' && boot.provisioning.status === 404, 'token refused with 404');
      deepEqual(target.device.records.list('clients'), ['keep-me'], 'cleanup only after a valid token: records kept');
      equal(target.device.local.etag() !== null && utf8Decode(target.storage.read('/backup.json', 0, 13)), '{"keep":"me"}', 'and the backup kept');
    },
  },
  {
    name: 'no provisioning AP: the target boots unconfigured',
    async run() {
      const { target } = await rig();
      const boot = await target.device.boot();
      ok(boot.role === 'controller' && boot.provisioning.kind === 'no_ap', 'no_ap');
    },
  },
  {
    name: 'a failed copy leaves the board unconfigured (it provisions again at the next boot) until the admin configures it through the API',
    async run() {
      const { source, target, auth } = await rig();
      source.storage.files.set('/records/clients/client-extra-1', new Uint8Array(40));
      await enable(source, auth);
      const first = await target.device.boot();
      ok(first.role === 'controller' && first.provisioning.kind === 'finished' && !first.provisioning.ok, 'a failed outcome');
      ok(target.device.records.list('controllers').length === 3, 'records were copied, own record included');
      equal(target.device.status().configured, false, 'but an unfinished copy is not a configuration');
      const again = await target.device.boot();
      ok(again.role === 'controller' && again.provisioning.kind === 'finished', `the procedure runs again (got ${JSON.stringify(again)})`);
      const tauth = await login(target);
      equal((await call(target, 'PUT', '/backup', { headers: tauth, body: '{"set":"by hand"}' })).status, 200, 'the admin deploys a configuration');
      equal(target.device.status().configured, true, 'configured now');
      const third = await target.device.boot();
      ok(third.role === 'controller' && third.provisioning.kind === 'configured', 'and never wiped again');
    },
  },
  {
    name: 'a failed backup commit on the target: "Prov OK 3C 3L" / "Prov bad backup", logged, no reboot, no half-installed backup',
    async run() {
      const { b, source, target, auth } = await rig();
      const realRename = target.storage.rename.bind(target.storage);
      target.storage.rename = (from: string, to: string) => {
        if (to === '/backup.etag') throw new Error('flash write failed');
        realRename(from, to);
      };
      await enable(source, auth);
      const boot = await target.device.boot();
      ok(boot.role === 'controller' && boot.provisioning.kind === 'finished', `the procedure finishes (got ${JSON.stringify(boot.provisioning)})`);
      ok(boot.role === 'controller' && boot.provisioning.kind === 'finished' && boot.provisioning.backup === 'bad' && !boot.provisioning.ok, 'backup bad, not ok');
      ok(target.display.history.some((l) => l[0] === 'Prov OK 3C 3L' && l[1] === 'Prov bad backup'), 'OLED');
      ok(target.events.some((e) => e.level === 'error' && e.message === 'backup not written: flash write failed'), 'the cause is logged');
      ok(target.events.some((e) => e.level === 'error' && e.message === 'Prov OK 3C 3L / Prov bad backup'), 'the outcome is logged');
      equal(target.device.local.size(), null, 'no backup left');
      await b.clock.advance(10_000);
      equal(target.reboots.length, 0, 'no reboot');
    },
  },
  {
    name: 'the backup file cannot even be created on the target: "Prov bad backup", logged, not "connect_failed"',
    async run() {
      const { source, target, auth } = await rig();
      const realCreate = target.storage.create.bind(target.storage);
      target.storage.create = (path: string) => {
        if (path.startsWith('/backup.json')) throw new Error('no space left on the partition');
        return realCreate(path);
      };
      await enable(source, auth);
      const boot = await target.device.boot();
      ok(boot.role === 'controller' && boot.provisioning.kind === 'finished' && boot.provisioning.backup === 'bad', `a bad backup (got ${JSON.stringify(boot.provisioning)})`);
      ok(target.display.history.some((l) => l[0] === 'Prov OK 3C 3L' && l[1] === 'Prov bad backup'), 'OLED');
      ok(target.events.some((e) => e.level === 'error' && e.message === 'backup not written: no space left on the partition'), 'the cause is logged');
    },
  },
  {
    name: 'the OLED event log page wraps entries at word boundaries (21 columns, 8 rows, newest last)',
    async run() {
      deepEqual(wrapWords('W cannot join Device-Provisioning (24:0A:C4:10:00:09): no AP', 21), ['W cannot join', 'Device-Provisioning', '(24:0A:C4:10:00:09):', 'no AP'], 'wrapped');
      deepEqual(wrapWords('I ' + 'x'.repeat(30), 21), ['I', 'x'.repeat(21), 'x'.repeat(9)], 'a word longer than a line is split');
      const page = eventLogPage([
        { level: 'info', message: 'old entry that will not fit on this page any more, it is far too long' },
        { level: 'warning', message: 'record controllers/ctl-extra-0 not written: damaged' },
        { level: 'error', message: 'Prov fail C 2/3' },
      ]);
      deepEqual(page, ['I old entry that will', 'not fit on this page', 'any more, it is far', 'W record', 'controllers/ctl-extra', '-0 not written:', 'damaged', 'E Prov fail C 2/3'], 'the page');
      ok(page.every((l) => l.length <= 21), 'no line longer than 21');
    },
  },
  {
    name: 'what counts as configured (step 1): own record, any record, a local backup; not an unfinished copy; each with why',
    async run() {
      const b = bench();
      const t = board(b, { role: 'controller' });
      const why = () => controllerConfiguration({ hal: t.hal, records: t.device.records, local: t.device.local });
      deepEqual(why(), { configured: false, why: 'no records and no backup' }, 'empty');
      t.device.records.put('controllers', t.identity.uuid, JSON.stringify({ ethernet_mac: t.identity.ethernetMac }));
      deepEqual(why(), { configured: true, why: 'its own controller record' }, 'own record');
      t.device.records.remove('controllers', t.identity.uuid);
      t.device.records.put('clients', 'lamp-1', JSON.stringify(clientConfig('02:00:00:00:00:01')));
      deepEqual(why(), { configured: true, why: '0 controller and 1 client records' }, 'a client record');
      t.device.records.put('controllers', 'ctl-9', JSON.stringify({ ethernet_mac: '02:00:00:E0:00:09' }));
      deepEqual(why(), { configured: true, why: '1 controller and 1 client records' }, 'records of both kinds');
      t.device.records.clear();
      const w = t.device.local.begin();
      w.write(utf8Encode('{}'));
      w.commit();
      deepEqual(why(), { configured: true, why: 'a local backup' }, 'a backup');
      t.storage.files.set(PROVISIONING_INCOMPLETE_PATH, utf8Encode(t.identity.uuid));
      deepEqual(why(), { configured: false, why: 'an earlier provisioning did not finish' }, 'the marker wins');
      equal(PROVISIONING_INCOMPLETE_PATH, '/config/provisioning-incomplete', 'the marker path (docs/storage.md)');
    },
  },
  {
    name: 'a source that answers the exchange with 500, or 200 without a token: token_refused, nothing deleted',
    async run() {
      for (const [status, body] of [[500, { error: 'boom' }], [200, { nothing: true }]] as const) {
        const { source, target, auth } = await rig();
        leftovers(target, 'keep-me');
        const handle = source.device.handle.bind(source.device);
        source.device.handle = async (r) => (r.path === '/api/provisioning/token' ? jsonResponse(status, body) : handle(r));
        await enable(source, auth);
        const boot = await target.device.boot();
        deepEqual(boot.role === 'controller' ? boot.provisioning : null, { kind: 'token_refused', status }, `${status}`);
        deepEqual(target.device.records.list('clients'), ['keep-me'], `${status}: nothing deleted`);
        if (status === 500) ok(target.events.some((e) => e.message === 'provisioning token refused (500): continuing unprovisioned'), 'logged');
      }
    },
  },
  {
    name: 'a list the source cannot give, or one with names that are no UUIDs, is a count mismatch; a /backup answer other than 200 or 404 is a bad backup',
    async run() {
      {
        const { b, source, target, auth } = await rig();
        const handle = source.device.handle.bind(source.device);
        source.device.handle = async (r) => (r.path === '/api/clients' ? jsonResponse(500, { error: 'boom' }) : handle(r));
        await enable(source, auth);
        const boot = await target.device.boot();
        ok(boot.role === 'controller' && boot.provisioning.kind === 'finished' && !boot.provisioning.ok, 'a failure');
        ok(boot.role === 'controller' && boot.provisioning.kind === 'finished' && boot.provisioning.lines[0].startsWith('Prov fail L 0/'), `the client line (${JSON.stringify(boot)})`);
        await b.clock.advance(10_000);
        equal(target.reboots.length, 0, 'no reboot');
      }
      {
        const { source, target, auth } = await rig();
        const handle = source.device.handle.bind(source.device);
        source.device.handle = async (r) => (r.path === '/api/controllers' ? jsonResponse(200, [...source.device.records.list('controllers'), '../escape', 7]) : handle(r));
        await enable(source, auth);
        const boot = await target.device.boot();
        ok(boot.role === 'controller' && boot.provisioning.kind === 'finished' && boot.provisioning.lines[0] === 'Prov fail C 3/5', `counted against the whole list (${JSON.stringify(boot)})`);
        equal(target.device.records.list('controllers').length, 3, 'only the UUIDs were fetched');
      }
      {
        const { b, source, target, auth } = await rig();
        const handle = source.device.handle.bind(source.device);
        source.device.handle = async (r) => (r.path === '/backup' ? jsonResponse(500, { error: 'boom' }) : handle(r));
        await enable(source, auth);
        const boot = await target.device.boot();
        ok(boot.role === 'controller' && boot.provisioning.kind === 'finished' && boot.provisioning.backup === 'bad', 'a bad backup');
        deepEqual(target.display.history.find((l) => l[0] === 'Prov OK 3C 3L'), ['Prov OK 3C 3L', 'Prov bad backup'], 'OLED');
        await b.clock.advance(10_000);
        equal(target.reboots.length, 0, 'no reboot');
      }
    },
  },
  {
    name: 'the OLED pages: at most 8 rows, newest last; words split at 21 columns exactly, runs of spaces collapse',
    async run() {
      deepEqual(wrapWords('  a   b  ', 21), ['a b'], 'spaces');
      deepEqual(wrapWords('x'.repeat(21), 21), ['x'.repeat(21)], 'exactly 21');
      deepEqual(wrapWords(`ab ${'x'.repeat(22)} cd`, 21), ['ab', 'x'.repeat(21), 'x cd'], 'a long word after a short one');
      deepEqual(wrapWords('', 21), [], 'nothing');
      const many = Array.from({ length: 12 }, (_, i) => ({ level: 'info' as const, message: `entry ${i}` }));
      deepEqual(eventLogPage(many), many.slice(4).map((e) => `I ${e.message}`), 'the newest 8');
      deepEqual(eventLogPage([{ level: 'warning', message: 'w' }], 8, 21), ['W w'], 'one entry');
      deepEqual(eventLogPage([]), [], 'none');
    },
  },
  {
    name: 'the event log page after a failed copy shows whole words',
    async run() {
      const { source, target, auth } = await rig();
      source.storage.files.set('/records/controllers/ctl-extra-0', new Uint8Array([70, 70, 67, 69, 1, 2, 3]));
      await enable(source, auth);
      await target.device.boot();
      const page = target.display.lines;
      ok(page.every((l) => l.length <= 21), `21 columns at most (${JSON.stringify(page)})`);
      deepEqual(page.slice(-4), ['W record', 'controllers/ctl-extra', '-0 not received (404)', 'E Prov fail C 2/3'], 'the newest entries, wrapped at words');
    },
  },
];
