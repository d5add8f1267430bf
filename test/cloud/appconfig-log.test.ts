// The records svc-func-appconfig writes when a super user changes a function's configuration: one at
// INFO per stage, deploy and delete, naming the function changed, the version, the deployed level
// and who did it (the token's subject), and none while svc-func-appconfig runs at its default
// WARNING (spec 2.7). Checked by fields, not by wording: the message texts are not fixed anywhere
// (docs/mutation-survivors.md), only that each action's record says which action it was.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';

let clock = Date.parse('2026-11-21T10:00:00Z');
let cloud: TestCloud;
beforeAll(async () => {
  cloud = await startTestCloud({ now: () => clock, env: { APPCONFIG_DEPLOY_SECONDS: '5' } });
});
afterAll(() => cloud.close());

const RESERVED = new Set(['time', 'level', 'function', 'msg', 'message', 'pid', 'hostname', 'v']);
type Rec = Record<string, unknown>;

/** The record's level as a name, whatever the logger writes (a name in any case, or pino's number). */
function levelName(r: Rec): string {
  const PINO: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARNING', 50: 'ERROR', 60: 'CRITICAL' };
  return typeof r.level === 'number' ? (PINO[r.level] ?? String(r.level)) : String(r.level).toUpperCase();
}
const text = (r: Rec) => String(r.msg ?? r.message ?? '');
/** The fields a call site passed, without the logger's own keys. */
const fields = (r: Rec) => Object.fromEntries(Object.entries(r).filter(([k]) => !RESERVED.has(k)));
const appconfigRecords = () => (cloud.logs as unknown as Rec[]).filter((r) => r.function === 'svc-func-appconfig');

async function as(subject: string, method: string, path: string, body?: unknown): Promise<number> {
  const token = await mintToken(new TextEncoder().encode(TEST_JWT_SECRET), { subject, groups: ['superuser'] });
  const res = await fetch(cloud.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

it('at WARNING (the default) svc-func-appconfig writes no record for a change', async () => {
  expect(await as('alice@example', 'PATCH', '/appconfig/svc-func-health', { logging: 'ERROR' })).toBe(200);
  expect(await as('alice@example', 'POST', '/appconfig/svc-func-health/deploy')).toBe(202);
  clock += 6000;
  expect(await as('alice@example', 'DELETE', '/appconfig/svc-func-health')).toBe(204);
  expect(appconfigRecords()).toEqual([]);
});

it('at INFO: stage, deploy and delete each write one INFO record with the function, version, level and the super user', async () => {
  expect(await as('ops-admin', 'PATCH', '/appconfig/svc-func-appconfig', { logging: 'INFO' })).toBe(200);
  expect(await as('ops-admin', 'POST', '/appconfig/svc-func-appconfig/deploy')).toBe(202);
  clock += 6000;
  cloud.logs.length = 0;

  expect(await as('alice@example', 'PATCH', '/appconfig/svc-func-ota', { logging: 'debug' })).toBe(200);
  expect(await as('alice@example', 'PATCH', '/appconfig/svc-func-ota', { logging: 'ERROR' })).toBe(200);
  const staged = appconfigRecords();
  expect(staged).toHaveLength(2);
  expect(staged.map(levelName)).toEqual(['INFO', 'INFO']);
  expect(fields(staged[0]!)).toEqual({ function_name: 'svc-func-ota', version: 1, by: 'alice@example' });
  expect(fields(staged[1]!)).toEqual({ function_name: 'svc-func-ota', version: 2, by: 'alice@example' });

  cloud.logs.length = 0;
  expect(await as('bob@example', 'POST', '/appconfig/svc-func-ota/deploy')).toBe(202);
  const deployed = appconfigRecords();
  expect(deployed).toHaveLength(1);
  expect(levelName(deployed[0]!)).toBe('INFO');
  const d = fields(deployed[0]!);
  // The deployed level is a field of the record; the logger may rename a field called `level` so
  // that it never replaces the record's own level (cloud/logging.ts: `field_level`).
  const { level: _l, field_level: _f, ...rest } = d as Rec;
  expect(rest).toEqual({ function_name: 'svc-func-ota', version: 2, by: 'bob@example' });
  expect(d.field_level ?? d.level).toBe('ERROR');

  clock += 6000;
  cloud.logs.length = 0;
  expect(await as('carol@example', 'DELETE', '/appconfig/svc-func-ota')).toBe(204);
  const deleted = appconfigRecords();
  expect(deleted).toHaveLength(1);
  expect(levelName(deleted[0]!)).toBe('INFO');
  expect(fields(deleted[0]!)).toEqual({ function_name: 'svc-func-ota', by: 'carol@example' });

  // Each record says which action it was: three non-empty, different messages.
  const messages = [staged[0]!, deployed[0]!, deleted[0]!].map(text);
  for (const m of messages) expect(m.trim()).not.toBe('');
  expect(new Set(messages).size).toBe(3);
  expect(text(staged[1]!)).toBe(messages[0]);

  clock += 6000;
  await as('ops-admin', 'DELETE', '/appconfig/svc-func-appconfig');
});

it('a refused change writes no change record', async () => {
  expect(await as('ops-admin', 'PATCH', '/appconfig/svc-func-appconfig', { logging: 'INFO' })).toBe(200);
  expect(await as('ops-admin', 'POST', '/appconfig/svc-func-appconfig/deploy')).toBe(202);
  clock += 6000;
  cloud.logs.length = 0;
  expect(await as('alice@example', 'PATCH', '/appconfig/svc-func-ota', { logging: 'LOUD' })).toBe(400);
  expect(await as('alice@example', 'POST', '/appconfig/svc-func-ota/deploy')).toBe(404);
  expect(await as('alice@example', 'DELETE', '/appconfig/svc-func-ota')).toBe(404);
  // Only the refusals are logged (docs/appconfig-deployments.md: refused requests at INFO), none as a change.
  expect(appconfigRecords().map((r) => [levelName(r), r.status, r.error, 'by' in r])).toEqual([
    ['INFO', 400, 'invalid_log_level', false],
    ['INFO', 404, 'no_staged_configuration', false],
    ['INFO', 404, 'configuration_not_found', false],
  ]);
  clock += 6000;
  await as('ops-admin', 'DELETE', '/appconfig/svc-func-appconfig');
});
