// The SoftAP's authentication mode (spec 2.5: WPA2, CCMP): the HAL names it, and the in-memory air
// refuses an open or WPA1 AP and a passphrase outside 8-63 characters.
import type { SoftApConfig } from '../src/hal/radio.ts';
import { softApConfigProblem } from '../src/hal/radio.ts';
import { equal, ok, rejects, type TestCase } from './assert.ts';
import { bench, board, call, login } from './fixtures.ts';

const good: SoftApConfig = { ssid: 'Device-Provisioning', auth: 'wpa2-psk', password: 'ABCDEF012345', txPowerDbm: 2, maxStations: 1 };

export const radioCases: TestCase[] = [
  {
    name: 'provisioning mode starts its SoftAP as WPA2-PSK (CCMP)',
    async run() {
      const b = bench();
      const ctl = board(b, { role: 'controller' });
      await ctl.device.boot();
      equal((await call(ctl, 'PUT', '/api/provisioning', { headers: await login(ctl) })).status, 200, 'enable');
      equal([...b.air.aps.values()][0]!.config.auth, 'wpa2-psk', 'auth mode');
    },
  },
  {
    name: 'the memory air refuses an open AP, WPA1 or mixed mode, and a passphrase outside 8-63 printable characters',
    async run() {
      const b = bench();
      const ctl = board(b, { role: 'controller' });
      const start = (c: Record<string, unknown>) => ctl.hal.radio.startSoftAp({ ...good, ...c } as unknown as SoftApConfig);
      await rejects(() => start({ auth: 'open' }), /open AP.*only WPA2-PSK/, 'open');
      await rejects(() => start({ auth: undefined }), /open AP/, 'no mode at all');
      await rejects(() => start({ auth: 'wpa-psk' }), /authentication mode "wpa-psk".*only WPA2-PSK/, 'WPA1');
      await rejects(() => start({ auth: 'wpa-wpa2-psk' }), /"wpa-wpa2-psk"/, 'WPA/WPA2 mixed');
      await rejects(() => start({ password: '1234567' }), /8 to 63/, '7 characters');
      await rejects(() => start({ password: 'x'.repeat(64) }), /8 to 63/, '64 characters');
      await rejects(() => start({ password: 'tab\tinside' }), /printable/, 'a control character');
      equal(b.air.aps.size, 0, 'nothing was started');
      await start({ password: '12345678' });
      equal(b.air.aps.size, 1, '8 characters start');
      await ctl.hal.radio.stopSoftAp();
      await start({ password: 'y'.repeat(63) });
      equal(b.air.aps.size, 1, '63 characters start');
    },
  },
  {
    name: 'softApConfigProblem accepts only wpa2-psk with a 1-32 character SSID',
    async run() {
      equal(softApConfigProblem(good), null, 'the provisioning AP');
      ok(softApConfigProblem({ ...good, ssid: '' }) !== null, 'empty SSID');
      ok(softApConfigProblem({ ...good, ssid: 'x'.repeat(33) }) !== null, '33-character SSID');
      ok(softApConfigProblem({ ...good, auth: 'WPA2-PSK' }) !== null, 'mode names are exact');
    },
  },
];
