// A controller's answers judged by the device API's contract (docs/firmware-api.md,
// docs/configurator-controller-access.md), over real sockets: a status the route does not answer
// (a 201 or a 299 with an error body), an error its catalog does not have, or a success that does
// not carry what the route answers becomes a 502 controller_bad_answer naming what the controller
// sent, never the configurator's own success; the API's own errors are still relayed with their
// status and code; nothing in the site changes. The controller is a stand-in on 127.0.0.1.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConfigurator, type RunningConfigurator } from '../../configurator/server/app.ts';
import { startStandInController, type StandInAnswer, type StandInController } from './stand-in-controller.ts';
import { pageClient } from '../helpers/configurator-page-client.ts';

let dir: string;
let running: RunningConfigurator;
let odd: StandInController;
let id: number;
const call = pageClient(() => running.url);

const radioFault = { error: 'provisioning_failed', message: 'the radio did not start' };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'configurator-answers-'));
  running = await startConfigurator({ site: join(dir, 'site.db'), link: { timeoutMs: 2_000 } });
  odd = await startStandInController();
  id = (await call('POST', '/api/controllers', { name: 'Odd', address: odd.url })).json.id;
  expect((await call('POST', `/api/controllers/${id}/login`, { password: 'any-password' })).status).toBe(200);
});

afterAll(async () => {
  await running?.close();
  await odd?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('an answer outside the device API\'s contract is a 502 that says what came, never a success', () => {
  const cases: [string, StandInAnswer, [string, string], { status: number; json: unknown }][] = [
    [
      'PUT /api/provisioning',
      { status: 201, body: radioFault },
      ['PUT', 'provisioning'],
      {
        status: 502,
        json: {
          error: 'controller_bad_answer',
          message: 'Odd answered PUT /api/provisioning with status 201 and the error "provisioning_failed" (the radio did not start); its API answers 200 there',
          details: { controller_status: 201, expected_statuses: [200] },
        },
      },
    ],
    [
      'POST /api/cloud-backup',
      { status: 299, body: { error: 'cloud_error', message: 'The cloud answered 500' } },
      ['POST', 'cloud-backup'],
      {
        status: 502,
        json: {
          error: 'controller_bad_answer',
          message: 'Odd answered POST /api/cloud-backup with status 299 and the error "cloud_error" (The cloud answered 500); its API answers 200 there',
          details: { controller_status: 299, expected_statuses: [200] },
        },
      },
    ],
    [
      'DELETE /api/cloud-backup',
      { status: 200, body: { deleted: true } },
      ['DELETE', 'cloud-backup'],
      {
        status: 502,
        json: { error: 'controller_bad_answer', message: 'Odd answered DELETE /api/cloud-backup with status 200; its API answers 204 there', details: { controller_status: 200, expected_statuses: [204] } },
      },
    ],
    [
      'PUT /api/provisioning',
      { status: 418, body: { error: 'teapot', message: 'short and stout' } },
      ['PUT', 'provisioning'],
      {
        status: 502,
        json: {
          error: 'controller_bad_answer',
          message: 'Odd answered PUT /api/provisioning with status 418 and the error "teapot" (short and stout), which is not an error of its API',
          details: { controller_status: 418, controller_error: 'teapot' },
        },
      },
    ],
    [
      'GET /api/cloud',
      { status: 404, body: { error: 'too_many_attempts', message: 'later' } },
      ['GET', 'cloud'],
      {
        status: 502,
        json: {
          error: 'controller_bad_answer',
          message: 'Odd answered GET /api/cloud with status 404 and the error "too_many_attempts" (later), which its API answers with 429',
          details: { controller_status: 404, controller_error: 'too_many_attempts' },
        },
      },
    ],
    [
      'GET /api/events',
      { status: 200, body: '<html>events</html>', headers: { 'content-type': 'text/html' } },
      ['GET', 'events'],
      { status: 502, json: { error: 'controller_bad_answer', message: 'Odd answered GET /api/events with status 200 but not {"events": [{"time", "level", "source", "message"}, …]}', details: { controller_status: 200 } } },
    ],
    [
      'GET /api/events',
      { status: 200, body: { events: 'lots' } },
      ['GET', 'events'],
      { status: 502, json: { error: 'controller_bad_answer', message: 'Odd answered GET /api/events with status 200 but not {"events": [{"time", "level", "source", "message"}, …]}', details: { controller_status: 200 } } },
    ],
    [
      'PUT /api/provisioning',
      { status: 200, body: [] },
      ['PUT', 'provisioning'],
      { status: 502, json: { error: 'controller_bad_answer', message: 'Odd answered PUT /api/provisioning with status 200 but not the provisioning mode {"active", "state", …}', details: { controller_status: 200 } } },
    ],
    [
      'PUT /api/cloud',
      { status: 500, body: 'boom', headers: { 'content-type': 'text/plain' } },
      ['PUT', 'cloud'],
      { status: 502, json: { error: 'controller_bad_answer', message: 'Odd answered PUT /api/cloud with status 500 and no error of its API', details: { controller_status: 500 } } },
    ],
  ];
  for (const [route, answer, [method, what], expected] of cases) {
    it(`${route} answered ${answer.status} ${typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)}`, async () => {
      odd.answer(route, answer);
      const body = method === 'PUT' && what === 'cloud' ? { url: 'http://127.0.0.1:9' } : undefined;
      expect(await call(method, `/api/controllers/${id}/${what}`, body)).toEqual(expected);
    });
  }

  it('a 201 to the log-in is refused and opens no session; a 299 to GET /backup makes Pull change nothing', async () => {
    const before = running.store.configuration(id).text;
    odd.answer('GET /backup', { status: 299, body: { error: 'no_backup', message: 'No backup exists' } });
    expect(await call('POST', `/api/controllers/${id}/pull`)).toEqual({
      status: 502,
      json: {
        error: 'controller_bad_answer',
        message: 'Odd answered GET /backup with status 299 and the error "no_backup" (No backup exists); its API answers 200 or 404 there',
        details: { controller_status: 299, expected_statuses: [200, 404] },
      },
    });
    expect(running.store.configuration(id).text).toBe(before);
    const sessions = running.sessions.size;
    odd.answer('POST /api/login', { status: 201, body: { error: 'invalid_password', message: 'Wrong password' } });
    const stranger = await fetch(`${running.url}api/controllers/${id}/login`, { method: 'POST', headers: { 'x-fleet-page': '1', 'content-type': 'application/json' }, body: '{"password": "x"}' });
    expect([stranger.status, stranger.headers.get('set-cookie'), ((await stranger.json()) as { error: string }).error]).toEqual([502, null, 'controller_bad_answer']);
    expect(running.sessions.size).toBe(sessions);
  });

  it('a status page that is not JSON is shown as the controller\'s problem, not a configurator 500', async () => {
    odd.answer('GET /api/status', { status: 200, body: '<html>router</html>', headers: { 'content-type': 'text/html' } });
    expect(await call('GET', `/api/controllers/${id}/state`)).toMatchObject({
      status: 200,
      json: { reachable: true, logged_in: true, backup: 'unknown', problem: 'Odd answered GET /api/status with status 200 but not a JSON object' },
    });
  });
});

describe('the device API\'s own errors are still relayed with their status and code', () => {
  it('409 not_provisioned, 429 too_many_attempts with Retry-After, 409 provisioning_mode_off as the mode\'s state', async () => {
    odd.answer('POST /api/cloud-backup', { status: 409, body: { error: 'not_provisioned', message: 'No cloud URL is set' } });
    expect(await call('POST', `/api/controllers/${id}/cloud-backup`)).toEqual({ status: 409, json: { error: 'not_provisioned', message: 'Odd: No cloud URL is set', details: { controller_status: 409 } } });
    odd.answer('POST /api/login', { status: 429, body: { error: 'too_many_attempts', message: 'Too many failed attempts: try again in 4 s' }, headers: { 'retry-after': '4' } });
    expect(await call('POST', `/api/controllers/${id}/login`, { password: 'wrong-one' })).toEqual({
      status: 429,
      json: { error: 'too_many_attempts', message: 'Odd: Too many failed attempts: try again in 4 s', details: { controller_status: 429, retry_after_seconds: 4 } },
    });
    odd.answer('GET /api/provisioning', { status: 409, body: { error: 'provisioning_mode_off', message: 'Provisioning mode is not active (it last stopped: timeout)', details: { state: 'disabled', last_stop_reason: 'timeout' } } });
    expect(await call('GET', `/api/controllers/${id}/provisioning`)).toEqual({ status: 200, json: { active: false, state: 'disabled', last_stop_reason: 'timeout' } });
    odd.answer('PUT /api/provisioning', { status: 200, body: { active: true, state: 'enabled', ssid: 'Device-Provisioning', password: '0123456789AB', bssid: '02:00:00:00:00:01', expires_in: 300, allowlist_size: 0 } });
    expect(await call('PUT', `/api/controllers/${id}/provisioning`)).toMatchObject({ status: 200, json: { active: true, allowlist_size: 0 } });
  });
});
