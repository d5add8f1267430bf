// Time limits an unauthenticated client cannot stretch (docs/cloud-limits.md): headers that trickle
// in (slowloris), a body that stops, a request that never finishes. Each ends in a JSON 408 and a
// closed connection, and nothing is stored. Short limits here; the defaults are in cloud/limits.ts.
import type { KeyObject } from 'node:crypto';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { loadConfig } from '../../cloud/config.ts';
import type { LogRecord } from '../../cloud/logging.ts';
import { startCloudServer, type RunningCloud } from '../../cloud/server.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { signDeviceRequest } from '../../tools/device-signer.ts';
import { httpRequest, rawExchange, type RawResult } from '../../tools/fuzz/raw-http.ts';
import { ffceBlob, TEST_JWT_SECRET } from '../helpers/cloud.ts';

const LIMITS = { headersTimeoutMs: 600, requestTimeoutMs: 1500, bodyIdleTimeoutMs: 400, connectionsCheckingIntervalMs: 100 };
const UUID = 'dev-slow';
let cloud: RunningCloud;
let target: { host: string; port: number };
let key: KeyObject;
const logs: LogRecord[] = [];

beforeAll(async () => {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: ':memory:', JWT_SECRET: TEST_JWT_SECRET });
  cloud = await startCloudServer(config, { store: new SqliteStore(':memory:'), sink: (r) => logs.push(r), limits: LIMITS });
  target = { host: '127.0.0.1', port: Number(new URL(cloud.url).port) };
  const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  key = pair.privateKey;
  const token = await mintToken(new TextEncoder().encode(TEST_JWT_SECRET));
  const res = await fetch(`${cloud.url}/admin/devices/${UUID}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ public_key: pair.publicKey.export({ type: 'spki', format: 'pem' }) }),
  });
  expect(res.status).toBe(201);
});
afterAll(async () => {
  await cloud.close();
});

function expect408(result: RawResult, message: string | RegExp): void {
  expect(result.timedOut).toBe(false);
  expect(result.closed).toBe(true);
  const res = result.responses[0]!;
  expect(res.status).toBe(408);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.headers.connection).toBe('close');
  expect(JSON.parse(res.body.toString())).toMatchObject({ error: 'request_timeout', message });
}

async function backupStored(): Promise<number> {
  const res = await fetch(`${cloud.url}/devices/${UUID}/backup`, { headers: { ...signDeviceRequest(key, UUID) } });
  return res.status;
}

describe('time-outs', () => {
  it('headers sent a byte at a time (slowloris) get a JSON 408 once headersTimeout passes', async () => {
    const started = Date.now();
    const steps = Array.from({ length: 40 }, (_, i) => ({ write: i === 0 ? 'GET /health HTTP/1.1\r\nHost: x\r\n' : 'X', delayMs: 100 }));
    const result = await rawExchange(target, steps, { timeoutMs: 5000 });
    expect408(result, 'The request was not received in time');
    expect(Date.now() - started).toBeLessThan(LIMITS.headersTimeoutMs + 1000);
  });

  it('an upload whose body stops gets a JSON 408 after bodyIdleTimeout; nothing is stored', async () => {
    const head = httpRequest('POST', `/devices/${UUID}/backup`, [...Object.entries(signDeviceRequest(key, UUID)), ['Content-Type', 'application/octet-stream'], ['Content-Length', '4096']]);
    const result = await rawExchange(target, [{ write: head }, { write: ffceBlob(100), delayMs: 3000 }], { methods: ['POST'], timeoutMs: 5000 });
    expect408(result, `The request body sent nothing for ${LIMITS.bodyIdleTimeoutMs} ms`);
    expect(await backupStored()).toBe(404);
  });

  it('an upload that trickles (never idle, never done) gets a JSON 408 once requestTimeout passes', async () => {
    const head = httpRequest('POST', `/devices/${UUID}/backup`, [...Object.entries(signDeviceRequest(key, UUID)), ['Content-Type', 'application/octet-stream'], ['Content-Length', '4096']]);
    const steps = [{ write: head }, ...Array.from({ length: 30 }, () => ({ write: 'FFCE', delayMs: 100 }))];
    const started = Date.now();
    const result = await rawExchange(target, steps, { methods: ['POST'], timeoutMs: 5000 });
    expect408(result, 'The request was not received in time');
    expect(Date.now() - started).toBeLessThan(LIMITS.requestTimeoutMs + 1000);
    expect(await backupStored()).toBe(404);
    expect(logs.filter((l) => l.level === 'ERROR' || l.level === 'CRITICAL')).toEqual([]);
  });
});
