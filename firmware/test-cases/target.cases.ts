// The controller-provisioning target procedure (spec 3.6): every row of the outcome table, the
// refusals, and the reboot into normal mode with the same records.
import { equal, deepEqual, ok, type TestCase } from './assert.ts';
import { bench, board, call, login, seedSource, type Bench, type TestBoard } from './fixtures.ts';

const BACKUP = JSON.stringify({ inputs: [], outputs: [{ id: 1, name: 'Deck light' }], mqtt: { host: 'broker.local', port: 8883 } });

async function rig(o: { controllers?: number; clients?: number; backup?: string | null; registerTarget?: boolean } = {}) {
  const b: Bench = bench();
  const source = board(b, { role: 'controller' });
  const target = board(b, { role: 'controller' });
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
      // The target has leftovers from an earlier life: cleanup happens after the token.
      target.device.records.put('clients', 'stale-client', JSON.stringify({ mac: '02:00:00:00:00:01' }));
      await enable(source, auth);
      const boot = await target.device.boot();
      ok(boot.role === 'controller' && boot.provisioning.kind === 'finished', 'the procedure to finish');
      deepEqual(target.display.lines, ['Prov OK 3C 3L', 'Prov OK got backup'], 'OLED');
      ok(target.events.some((e) => e.message === 'Prov OK 3C 3L / Prov OK got backup'), 'event log line');
      equal(target.radio.currentStationMac(), target.identity.ethernetMac, 'the station MAC was the Ethernet MAC');
      deepEqual(target.device.records.list('clients'), source.device.records.list('clients'), 'client records');
      deepEqual(target.device.records.list('controllers'), source.device.records.list('controllers'), 'controller records');
      equal(target.device.local.etag(), source.device.local.etag(), 'backup ETag');
      equal(target.reboots.length, 0, 'no reboot before 5 s');
      await b.clock.advance(4999);
      equal(target.reboots.length, 0, 'still showing the result');
      await b.clock.advance(1);
      deepEqual(target.reboots, ['provisioned'], 'rebooted');
      // Records are encrypted at rest with the target's own key, not copied as bytes.
      const path = `/records/clients/${source.device.records.list('clients')[0]}`;
      ok(target.storage.size(path) !== null, 'record file');
      ok(String(target.storage.read(path, 0, 4)) !== '' && target.storage.read(path, 0, 4).join(',') === '70,70,67,69', 'FFCE framing at rest');
      // Normal mode after the reboot: configured, no provisioning.
      const again = await target.device.boot();
      ok(again.role === 'controller' && again.provisioning.kind === 'configured', 'configured after reboot');
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
      target.device.records.put('clients', 'keep-me', JSON.stringify({ mac: '02:00:00:00:00:02' }));
      await enable(source, auth);
      const boot = await target.device.boot();
      ok(boot.role === 'controller' && boot.provisioning.kind === 'token_refused' && boot.provisioning.status === 404, 'token refused with 404');
      deepEqual(target.device.records.list('clients'), ['keep-me'], 'cleanup only after a valid token');
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
];
