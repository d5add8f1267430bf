// Provisioning mode (spec 3.2) when two reasons to stop it meet: the first one stands. A refused
// station's warning stays on the OLED (spec 3.2) even if the time-out or a disable request comes in
// while the SoftAP is still being stopped; the mode is stopped and logged once.
import { deepEqual, equal, type TestCase } from './assert.ts';
import { bench, board, call, login } from './fixtures.ts';

export const modeEdgeCases: TestCase[] = [
  {
    name: 'provisioning mode: a second stop while the first is under way changes nothing (one log line, the first reason, its OLED page)',
    async run() {
      const b = bench();
      const s = board(b, { role: 'controller' });
      await s.device.boot();
      const auth = await login(s);
      equal((await call(s, 'PUT', '/api/provisioning', { headers: auth })).status, 200, 'enabled');
      const first = s.device.mode.disable('mac_not_allowed');
      const second = s.device.mode.disable('request');
      await Promise.all([first, second]);
      const offLines = s.events.filter((e) => e.message.startsWith('provisioning mode off'));
      equal(offLines.length, 1, 'stopped once');
      equal((s.device.mode.status() as { last_stop_reason?: string }).last_stop_reason, 'mac_not_allowed', 'the first reason stands');
      deepEqual(s.display.history.filter((l) => l[0] === 'Provisioning off'), [], 'the OLED is not switched to "Provisioning off"');
      await s.device.mode.disable('timeout');
      equal(s.events.filter((e) => e.message.startsWith('provisioning mode off')).length, 1, 'a stop when already off does nothing');
    },
  },
];
