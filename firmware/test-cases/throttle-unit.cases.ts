// FailureThrottle on its own (docs/firmware-login-throttle.md): the table of waits, waits measured
// from the failure that earned them, a clock that jumps backwards, refused attempts counted for the
// log only, and the log lines of the doc's "What is logged" table, at their failure counts only.
import { DEFAULT_THROTTLE, FailureThrottle } from '../src/core/auth/failure-throttle.ts';
import { deepEqual, equal, type TestCase } from './assert.ts';

function throttle(start = 1_000_000_000) {
  const t = { now: start };
  const logs: string[] = [];
  const th = new FailureThrottle('login', () => t.now, (level, message) => void logs.push(`${level} ${message}`));
  return { t, th, logs };
}

export const throttleUnitCases: TestCase[] = [
  {
    name: 'throttle: the wait after n failures is the doc table (0 to 4 none; 1 s doubling to 60 s; 15 min doubling to 24 h; shut at 100)',
    async run() {
      const { th } = throttle();
      const expected = (n: number) =>
        n < 5 ? 0 : n < 20 ? Math.min(1000 * 2 ** (n - 5), 60_000) : n < 100 ? Math.min(900_000 * 2 ** (n - 20), 86_400_000) : Infinity;
      for (let n = 0; n <= 102; n++) equal(th.windowMs(n), expected(n), `after ${n} failures`);
      equal(th.windowMs(99), 86_400_000, '99: 24 h, still a wait');
      equal(th.windowMs(100), Infinity, '100: shut');
      deepEqual(DEFAULT_THROTTLE, { freeFailures: 5, firstDelayMs: 1000, maxDelayMs: 60_000, lockoutAfter: 20, lockoutMs: 900_000, maxLockoutMs: 86_400_000, hardLimit: 100 }, 'the numbers');
    },
  },
  {
    name: 'throttle: a wait runs from the failure that earned it, not from the next attempt; a clock jumping back never lengthens it',
    async run() {
      const { t, th } = throttle();
      for (let i = 0; i < 5; i++) equal(th.retryAfterMs(), null, `attempt ${i + 1} checked`), th.failed();
      t.now += 400;
      equal(th.retryAfterMs(), 600, '400 ms after the 5th failure: 600 ms left');
      t.now += 599;
      equal(th.retryAfterMs(), 1, '1 ms left');
      t.now += 1;
      equal(th.retryAfterMs(), null, 'then checked');
      th.failed(); // 6: 2 s from now
      t.now -= 3_600_000; // the clock jumps back an hour (a first SNTP sync)
      equal(th.retryAfterMs(), 2000, 'after the jump: still only its own 2 s');
      t.now += 2000;
      equal(th.retryAfterMs(), null, 'and over 2 s later (by the new clock)');
    },
  },
  {
    name: 'throttle: the log lines of the doc at the 5th, from the 20th and at the 100th failure only; a success after 5 or more names the refusals',
    async run() {
      const { t, th, logs } = throttle();
      const fail = () => {
        t.now += 100_000_000; // past any finite wait
        equal(th.retryAfterMs(), null, 'checked');
        th.failed();
      };
      for (let n = 1; n <= 4; n++) fail();
      deepEqual(logs, [], 'nothing for 1 to 4');
      fail();
      deepEqual(logs, ['warning login: 5 failed attempts in a row; further attempts wait 1 s, doubling up to 60 s'], 'the 5th');
      for (let n = 6; n <= 19; n++) fail();
      equal(logs.length, 1, 'nothing for 6 to 19');
      fail();
      equal(logs[1], 'warning login locked for 900 s after 20 failed attempts in a row', 'the 20th');
      fail();
      equal(logs[2], 'warning login locked for 1800 s after 21 failed attempts in a row', 'the 21st');
      for (let n = 22; n <= 99; n++) fail();
      equal(logs.length, 81, 'the 5th, then one line per failure from the 20th to the 99th');
      equal(logs[80], 'warning login locked for 86400 s after 99 failed attempts in a row', 'the 99th');
      fail();
      equal(logs[81], 'error login locked after 100 failed attempts in a row, until the admin password is set again on the serial console', 'the 100th');
      t.now += 10 * 86_400_000;
      equal(th.retryAfterMs(), Infinity, 'shut, however long one waits');
      equal(th.failedAttempts(), 100, '100 counted');
    },
  },
  {
    name: 'throttle: refused attempts are counted for the success line only; a success after fewer than 5 failures logs nothing',
    async run() {
      const few = throttle();
      for (let i = 0; i < 4; i++) few.th.failed();
      few.th.succeeded();
      deepEqual(few.logs, [], 'no line after 4 failures');
      equal(few.th.failedAttempts(), 0, 'count reset');

      const five = throttle();
      for (let i = 0; i < 5; i++) five.th.failed();
      five.logs.length = 0;
      equal(five.th.retryAfterMs(), 1000, 'refused 1');
      five.t.now += 500;
      equal(five.th.retryAfterMs(), 500, 'refused 2');
      five.t.now += 100;
      equal(five.th.retryAfterMs(), 400, 'refused 3');
      five.t.now += 400;
      equal(five.th.retryAfterMs(), null, 'checked');
      equal(five.th.failedAttempts(), 5, 'refusals are not failures');
      five.th.succeeded();
      deepEqual(five.logs, ['info login succeeded after 5 failed attempts in a row (3 refused while waiting)'], 'the success line');
      five.th.failed();
      five.th.succeeded();
      equal(five.logs.length, 1, 'a later success after 1 failure: nothing');
    },
  },
];
