// The emulated `timer`, `time` and `sntp` modules inside XS: timers fire once (or repeat) and a cleared
// one never fires; the RTC counts from the epoch at boot until Time.set; SNTP reports the host
// server's time, and nothing at once while the server does not answer.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SimEngine } from '../helpers/sim-engine.ts';

let engine: SimEngine;
let serverTime: number | null = 1_767_225_600_000; // 2026-01-01T00:00:00Z

beforeAll(async () => {
  engine = await SimEngine.start({ sntpTime: () => serverTime });
}, 120_000);
afterAll(async () => {
  await engine?.close();
});

it('Timer.set fires once with the timer; Timer.clear cancels; Timer.repeat repeats until cleared', async () => {
  await engine.run(`
    sdk.Timer.set((t) => report({ fired: 'once', same: typeof t === 'object' }), 5);
    const gone = sdk.Timer.set(() => report({ fired: 'cleared' }), 5); sdk.Timer.clear(gone);
    let n = 0; const r = sdk.Timer.repeat((t) => { report({ fired: 'repeat' }); if (++n === 3) sdk.Timer.clear(t); }, 5);
    sdk.Timer.set(() => report({ fired: 'last' }), 60);
  `);
  const reports = await engine.waitFor((r) => r.some((x) => x.fired === 'last'));
  expect(reports.filter((x) => x.fired === 'repeat')).toHaveLength(3);
  expect(reports).toContainEqual({ fired: 'once', same: true });
  expect(reports.some((x) => x.fired === 'cleared')).toBe(false);
});

it('the RTC counts from the epoch at boot until SNTP sets it', async () => {
  await engine.run(`report(Date.now())`);
  const [before] = await engine.reports();
  expect(before).toBeLessThan(60_000);
  await engine.run(`new sdk.SNTP({ host: 'pool.ntp.org' }, (message, value) => { if (message === sdk.SNTP.time) sdk.Time.set(value); report({ message, now: Date.now() }); })`);
  const [answer] = await engine.waitFor((r) => r.length > 0);
  expect(answer.message).toBe(1);
  expect(Math.abs(answer.now - serverTime!)).toBeLessThan(5_000);
});

it('SNTP reports neither a time nor an error at once while the server does not answer (sntp.js retries every 5 s)', async () => {
  serverTime = null;
  await engine.run(`new sdk.SNTP({ host: 'pool.ntp.org' }, (message) => report(message))`);
  await new Promise((r) => setTimeout(r, 30));
  expect(await engine.reports()).toEqual([]); // the first retry comes after 5 s: nothing yet
}, 30_000);
