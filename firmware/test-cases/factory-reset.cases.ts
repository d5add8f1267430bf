// The console's factory-reset is all or nothing across a power cut (docs/storage.md, "Factory
// reset"): a marker written first (write-then-rename) and removed last; a marker found at boot means
// the reset is finished before anything reads the flash. These cases put the flash in the states a
// cut leaves and power the board up again on it.
import { utf8Encode } from '../src/core/bytes.ts';
import { readCloudConfig } from '../src/core/cloud/config.ts';
import { FACTORY_RESET_PENDING_PATH, tempPath } from '../src/core/flash.ts';
import { PROVISIONING_INCOMPLETE_PATH } from '../src/core/provisioning/target.ts';
import { PowerSwitch } from '../src/platform/memory/power-cut.ts';
import { MemoryStorage } from '../src/platform/memory/storage.ts';
import { equal, ok, type TestCase } from './assert.ts';
import { ADMIN_PASSWORD, bench, board, call, clientConfig, login, type Bench, type TestBoard, typeConsole as type } from './fixtures.ts';
import { REBOOT_GRACE_MS } from '../src/core/reboot.ts';

const OLD_PASSWORD = 'the owner password';
const UUID = 'ctl-reset';
const FUSE = '5a'.repeat(32);


/** A controller holding records, a backup, a cloud URL, its owner's password and a provisioning marker. */
async function configured(b: Bench, storage: MemoryStorage): Promise<TestBoard> {
  const c = board(b, { role: 'controller', uuid: UUID, fuseKeyHex: FUSE, storage });
  await c.device.boot();
  const auth = await login(c);
  equal((await call(c, 'PUT', '/api/controllers/ctl-a', { headers: auth, body: { name: 'A', ethernet_mac: '02:00:00:E0:00:0A' } })).status, 201, 'controller record');
  equal((await call(c, 'PUT', '/api/clients/lamp-1', { headers: auth, body: clientConfig('02:00:00:00:00:01') })).status, 201, 'client record');
  equal((await call(c, 'PUT', '/backup', { headers: auth, body: '{"a":1}' })).status, 200, 'backup');
  ok((await type(c, 'cloud http://cloud.example')).startsWith('OK '), 'cloud URL');
  ok((await type(c, `password ${OLD_PASSWORD}`)).startsWith('OK '), 'the owner password');
  storage.files.set(PROVISIONING_INCOMPLETE_PATH, utf8Encode(UUID));
  return c;
}

/** Powers the same board up again on the same flash (new RAM), with its factory password. */
function powerUp(b: Bench, storage: MemoryStorage): TestBoard {
  return board(b, { role: 'controller', uuid: UUID, fuseKeyHex: FUSE, storage });
}

async function loginStatus(c: TestBoard, password: string): Promise<number> {
  return (await call(c, 'POST', '/api/login', { body: { password } })).status;
}

/** Everything the reset removes is gone, the marker too; the factory password (set after) works. */
async function expectReset(c: TestBoard, storage: MemoryStorage): Promise<void> {
  equal(c.device.records.list('controllers').length + c.device.records.list('clients').length, 0, 'records gone');
  equal(c.device.records.allowlist().size, 0, 'allowlist empty');
  equal(c.device.local.size(), null, 'backup gone');
  equal(storage.files.has('/backup.etag'), false, 'sidecar gone');
  equal(readCloudConfig(storage), null, 'cloud URL gone');
  equal(storage.files.has(PROVISIONING_INCOMPLETE_PATH), false, 'provisioning marker gone');
  equal(storage.files.has(FACTORY_RESET_PENDING_PATH), false, 'reset marker removed last');
  equal(await loginStatus(c, OLD_PASSWORD), 401, 'the owner password is gone');
  equal(await loginStatus(c, ADMIN_PASSWORD), 200, 'the factory password is set again after the reset');
}

export const factoryResetCases: TestCase[] = [
  {
    name: 'a factory-reset marker found at boot: the reset is finished before anything reads the flash, and logged',
    async run() {
      const b = bench();
      const storage = new MemoryStorage();
      await configured(b, storage);
      // The power went right after the marker's rename: nothing removed yet.
      storage.files.set(FACTORY_RESET_PENDING_PATH, utf8Encode('1'));
      const again = powerUp(b, storage);
      const r = await again.device.boot();
      ok(r.role === 'controller' && r.provisioning.kind !== 'finished', 'no provisioning copy ran');
      equal(again.device.status().configured, false, 'unconfigured');
      ok(again.events.some((e) => e.level === 'warning' && e.source === 'boot' && /factory reset was interrupted .*finished now \(2 records removed\)/.test(e.message)), 'the repair is in the event log');
      ok(again.consoleOut.some((l) => l.startsWith('LOG WARNING boot: a factory reset was interrupted')), 'and on the console');
      await expectReset(again, storage);
    },
  },
  {
    name: 'a factory reset cut half way (records gone, backup and password kept) is finished at boot; the marker is never a record',
    async run() {
      const b = bench();
      const storage = new MemoryStorage();
      const c = await configured(b, storage);
      storage.files.set(FACTORY_RESET_PENDING_PATH, utf8Encode('1'));
      c.device.records.clear();
      const again = powerUp(b, storage);
      await again.device.boot();
      ok(again.events.some((e) => e.source === 'boot' && /finished now \(0 records removed\)/.test(e.message)), 'finished: the steps ran again');
      await expectReset(again, storage);
      // The next boot has nothing left to finish.
      const third = powerUp(b, storage);
      await third.device.boot();
      ok(!third.events.some((e) => /factory reset/.test(e.message)), 'no second repair');
    },
  },
  {
    name: 'a marker still in its temporary file (cut before the rename): the reset never began, nothing is removed',
    async run() {
      const b = bench();
      const storage = new MemoryStorage();
      await configured(b, storage);
      storage.files.set(tempPath(FACTORY_RESET_PENDING_PATH), utf8Encode('1'));
      const again = powerUp(b, storage);
      await again.device.boot();
      equal(storage.files.has(tempPath(FACTORY_RESET_PENDING_PATH)), false, 'temporary marker removed');
      equal(storage.files.has(FACTORY_RESET_PENDING_PATH), false, 'no marker');
      equal(again.device.records.list('clients').length, 1, 'records kept');
      equal(again.device.local.size(), 7, 'backup kept');
      equal(readCloudConfig(storage)?.url, 'http://cloud.example', 'cloud URL kept');
      equal(await loginStatus(again, OLD_PASSWORD), 200, 'the owner password kept');
      ok(!again.events.some((e) => /factory reset/.test(e.message)), 'no reset logged');
    },
  },
  {
    name: 'the boot that finishes a factory reset may itself lose power: the next one finishes it',
    async run() {
      const b = bench();
      const power = new PowerSwitch(11);
      const storage = new MemoryStorage(power);
      await configured(b, storage);
      storage.files.set(FACTORY_RESET_PENDING_PATH, utf8Encode('1'));
      // Cut the boot at its 3rd flash operation: within the reset's removals.
      power.arm(3);
      let died = false;
      try {
        await powerUp(b, storage).device.boot();
      } catch {
        died = true;
      }
      ok(died && power.off, 'the boot lost its power');
      ok(power.cut?.path.startsWith('/records/'), `cut within the reset's removals (at ${power.cut?.op} ${power.cut?.path})`);
      equal(storage.files.has(FACTORY_RESET_PENDING_PATH), true, 'the marker is still there');
      storage.restorePower();
      const again = powerUp(b, storage);
      await again.device.boot();
      await expectReset(again, storage);
    },
  },
  {
    name: 'console factory-reset: the marker is written first and removed last; the answer and the log say what went',
    async run() {
      const b = bench();
      const storage = new MemoryStorage();
      const c = await configured(b, storage);
      const answer = await type(c, 'factory-reset');
      ok(answer.startsWith('OK {"removed_records":2,"rebooting":true}'), `answered (got ${answer})`);
      equal(storage.files.has(FACTORY_RESET_PENDING_PATH), false, 'no marker left');
      equal(storage.files.has(tempPath(FACTORY_RESET_PENDING_PATH)), false, 'no temporary marker left');
      ok(c.events.some((e) => e.source === 'console' && /^factory reset: 2 records/.test(e.message)), 'logged');
      await b.clock.advance(REBOOT_GRACE_MS);
      equal(c.reboots[0], 'factory reset', 'rebooted');
      const again = powerUp(b, storage);
      await again.device.boot();
      ok(!again.events.some((e) => /interrupted/.test(e.message)), 'nothing to finish at boot');
      await expectReset(again, storage);
    },
  },
];
