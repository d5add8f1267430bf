// A health report answered before Express (cloud/device-fast-path.ts): devices' own target by the fast
// path, any other spelling (a trailing slash) by the Express route, with the same function, so every
// answer is the same whichever path takes it; with DEBUG on for svc-func-health, Express answers all.
import type { KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalDeviceUuid } from '../../cloud/device-fast-path.ts';
import { signDeviceRequest } from '../../tools/device-signer.ts';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';
import { bootReport, heartbeatReport } from '../helpers/health.ts';

let cloud: TestCloud;
let key: KeyObject;
let otherKey: KeyObject;
const UUID = 'health-fast-1';
let seq = 100;

beforeAll(async () => {
  cloud = await startTestCloud();
  key = (await cloud.enroll(UUID)).privateKey;
  otherKey = (await cloud.enroll('health-fast-2')).privateKey;
});
afterAll(() => cloud.close());

type Make = () => { headers: Record<string, string>; body: string };
const json = { 'content-type': 'application/json' };
const signedBy = (k: KeyObject, uuid = UUID) => ({ ...signDeviceRequest(k, uuid), ...json });

/** The request `make` gives, sent to the fast path's target and to Express's: both answers, seq left out. */
async function bothPaths(make: Make): Promise<{ status: number; body: any }[]> {
  const answers = [];
  for (const target of [`/devices/${UUID}/health`, `/devices/${UUID}/health/`]) {
    const { headers, body } = make();
    const res = await fetch(cloud.url + target, { method: 'POST', headers, body });
    const { seq: _seq, ...rest } = (await res.json()) as Record<string, unknown>;
    answers.push({ status: res.status, body: rest });
  }
  return answers;
}

describe('the fast path', () => {
  it('takes only the target devices send', () => {
    expect(canonicalDeviceUuid('/devices/dev-1/health', '/health')).toBe('dev-1');
    for (const other of ['/devices/dev-1/health/', '/devices/dev%2D1/health', '/devices/dev-1/health?x=1', '/devices//health', '/devices/dev-1/backup']) {
      expect(canonicalDeviceUuid(other, '/health'), other).toBeUndefined();
    }
  });

  it.each<[string, Make, number]>([
    ['a report stored (201)', () => ({ headers: signedBy(key), body: JSON.stringify(heartbeatReport(++seq)) }), 201],
    ['a seq stored before (200)', () => ({ headers: signedBy(key), body: JSON.stringify(bootReport(1)) }), 200],
    ['a bad field (400)', () => ({ headers: signedBy(key), body: JSON.stringify({ ...bootReport(++seq), reason: 'meltdown' }) }), 400],
    ['another media type (415)', () => ({ headers: { ...signedBy(key), 'content-type': 'text/plain' }, body: '{}' }), 415],
    ['another key (401)', () => ({ headers: signedBy(otherKey), body: JSON.stringify(heartbeatReport(++seq)) }), 401],
    ["X-Device-UUID not the path's (403)", () => ({ headers: signedBy(key, 'health-fast-2'), body: JSON.stringify(heartbeatReport(++seq)) }), 403],
    ['too large (413)', () => ({ headers: signedBy(key), body: JSON.stringify({ ...bootReport(++seq), by: 'x'.repeat(3000) }) }), 413],
  ])('%s: the same answer through both', async (_name, make, status) => {
    if (status === 200) expect((await bothPaths(() => ({ headers: signedBy(key), body: JSON.stringify(bootReport(1)) })))[0]!.status).toBe(201);
    const [fast, express] = await bothPaths(make);
    expect(fast!.status).toBe(status);
    expect(fast).toEqual(express);
  });

  it('at DEBUG, Express answers every report and writes its per-request line', async () => {
    expect((await cloud.admin('PATCH', '/appconfig/svc-func-health', { logging: 'DEBUG' })).status).toBe(200);
    expect((await cloud.admin('POST', '/appconfig/svc-func-health/deploy')).status).toBe(202);
    const res = await fetch(`${cloud.url}/devices/${UUID}/health`, { method: 'POST', headers: signedBy(key), body: JSON.stringify(heartbeatReport(++seq)) });
    expect(res.status).toBe(201);
    expect(cloud.logs.some((l) => l.function === 'svc-func-health' && l.msg === 'request' && l.path === `/devices/${UUID}/health` && l.status === 201)).toBe(true);
  });
});
