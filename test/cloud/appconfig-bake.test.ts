// The end of a deployment's bake (docs/appconfig-deployments.md): it lasts APPCONFIG_DEPLOY_SECONDS,
// so at that instant it is COMPLETE, as the store already treats it (deploy and DELETE are allowed
// again); one millisecond before, it is IN_PROGRESS and both are 409.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

let clock = Date.parse('2026-11-21T10:00:00Z');
let cloud: TestCloud;
beforeAll(async () => {
  cloud = await startTestCloud({ now: () => clock, env: { APPCONFIG_DEPLOY_SECONDS: '5' } });
});
afterAll(() => cloud.close());

const call = (method: string, path: string, body?: unknown) => cloud.adminJson(method, path, body);

it('IN_PROGRESS until started_at + 5 s, COMPLETE at that instant, for the view and the 409s alike', async () => {
  expect((await call('PATCH', '/appconfig/svc-func-health', { logging: 'INFO' })).status).toBe(200);
  const started = clock;
  const deployed = await call('POST', '/appconfig/svc-func-health/deploy');
  expect(deployed.status).toBe(202);
  expect(deployed.body.deployment).toMatchObject({ state: 'IN_PROGRESS', ends_at: new Date(started + 5000).toISOString() });
  clock = started + 4999;
  expect((await call('GET', '/appconfig/svc-func-health')).body.deployment.state).toBe('IN_PROGRESS');
  const busy = await call('DELETE', '/appconfig/svc-func-health');
  expect([busy.status, busy.body.error]).toEqual([409, 'deployment_in_progress']);
  clock = started + 5000;
  expect((await call('GET', '/appconfig/svc-func-health')).body.deployment.state).toBe('COMPLETE');
  expect((await call('DELETE', '/appconfig/svc-func-health')).status).toBe(204);
});
