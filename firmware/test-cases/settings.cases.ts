// The compile-time settings' defaults (spec 8, 3.2, 3.6): every value pinned, for production and
// debug builds, and seen at work on a board where a test can observe it.
import { defaultSettings } from '../src/core/settings.ts';
import { deepEqual, equal, ok, type TestCase } from './assert.ts';
import { bench, board, call, login, seedSource } from './fixtures.ts';

const PRODUCTION = {
  provisioningModeTtlSeconds: 300,
  provisioningTokenTtlSeconds: 300,
  cloudBackupIntervalSeconds: 86_400,
  cloudBackupFirstDelaySeconds: 30,
  targetConnectTimeoutMs: 10_000,
  resultDisplayMs: 5_000,
  provisioningTxPowerDbm: 2,
  minimumTxPowerDbm: 2,
  maxLocalBackupBytes: 524_256,
  chunkBytes: 4096,
  maxRecordBytes: 16_384,
  visualTokenTtlSeconds: 1800,
};

export const settingsCases: TestCase[] = [
  {
    name: 'the defaults: 5 min mode and token (30 min in debug builds), backup first at 30 s then every 86,400 s, 10 s connect, 5 s result',
    async run() {
      deepEqual(defaultSettings('production'), PRODUCTION, 'production build');
      deepEqual(defaultSettings('debug'), { ...PRODUCTION, provisioningModeTtlSeconds: 1800, provisioningTokenTtlSeconds: 1800 }, 'debug build');
      // An override of the mode TTL carries the token TTL with it unless that is set too.
      const mode = defaultSettings('production', { provisioningModeTtlSeconds: 120 });
      deepEqual([mode.provisioningModeTtlSeconds, mode.provisioningTokenTtlSeconds], [120, 120], 'mode TTL override');
      const both = defaultSettings('debug', { provisioningModeTtlSeconds: 120, provisioningTokenTtlSeconds: 60, cloudBackupIntervalSeconds: 3600 });
      deepEqual([both.provisioningModeTtlSeconds, both.provisioningTokenTtlSeconds, both.cloudBackupIntervalSeconds], [120, 60, 3600], 'overrides win');
    },
  },
  {
    name: 'a debug build announces 30-minute tokens and keeps the mode on for 30 minutes',
    async run() {
      const b = bench();
      const source = board(b, { role: 'controller', debug: true });
      const client = board(b, { role: 'client' });
      equal(source.identity.build, 'debug', 'a debug build');
      await source.device.boot();
      await seedSource(source, { clients: [client] });
      const auth = await login(source);
      equal((await call(source, 'PUT', '/api/provisioning', { headers: auth })).status, 200, 'enable');
      const ex = await call(source, 'POST', '/api/provisioning/token', { iface: 'softap', stationMac: client.identity.wifiMac, body: { uuid: client.identity.uuid, mac: client.identity.wifiMac } });
      equal(ex.json.expires_in, 1800, 'token lifetime');
      await b.clock.advance(1_800_000 - 1);
      ok(source.device.mode.active, 'still on 1 ms before 30 minutes');
      await b.clock.advance(1);
      ok(!source.device.mode.active, 'off at 30 minutes');
    },
  },
  {
    name: 'the target connects with a 10 s time-out and shows its result for 5 s',
    async run() {
      const b = bench();
      const source = board(b, { role: 'controller' });
      const target = board(b, { role: 'controller' });
      await source.device.boot();
      await seedSource(source, { target });
      equal((await call(source, 'PUT', '/api/provisioning', { headers: await login(source) })).status, 200, 'enable');
      const timeouts: number[] = [];
      const connect = target.hal.radio.connect.bind(target.hal.radio);
      target.hal.radio.connect = (o) => {
        timeouts.push(o.timeoutMs);
        return connect(o);
      };
      await target.device.boot();
      deepEqual(timeouts, [10_000], 'the connect time-out');
      await b.clock.advance(4_999);
      equal(target.reboots.length, 0, 'no reboot before 5 s');
      await b.clock.advance(1);
      equal(target.reboots.length, 1, 'reboot at 5 s');
    },
  },
];
