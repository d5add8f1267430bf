// Starts a real cloud on a loopback port for a test file, with an in-memory SQLite store (or a given
// one), captured structured logs, and helpers for super-user and device requests.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { loadConfig, type CloudConfig } from '../../cloud/config.ts';
import { mintToken } from '../../cloud/auth/jwt.ts';
import type { LogRecord } from '../../cloud/logging.ts';
import { watchResponses } from '../../cloud/schema/response-check.ts';
import { startCloudServer, type RunningCloud } from '../../cloud/server.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import type { CloudStore } from '../../cloud/store/types.ts';
import { signDeviceRequest } from '../../tools/device-signer.ts';

export const TEST_JWT_SECRET = 'test-secret-0123456789abcdef';

export interface TestCloud extends RunningCloud {
  config: CloudConfig;
  logs: LogRecord[];
  /** Responses that do not fit their declaration (cloud/schema/routes.ts); close() fails when any. */
  responseViolations: string[];
  token(groups?: string[]): Promise<string>;
  /** fetch against the cloud with a super-user token. */
  admin(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  /** admin(), with the answer read: its status and its JSON body (null when empty). */
  adminJson(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Enrolls a new device with a fresh P-256 key; returns its keys. */
  enroll(uuid: string): Promise<{ privateKey: KeyObject; publicKeyPem: string }>;
  signed(privateKey: KeyObject, uuid: string, opts?: Parameters<typeof signDeviceRequest>[2]): Record<string, string>;
}

export async function startTestCloud(
  opts: { env?: Record<string, string>; store?: CloudStore; now?: () => number } = {},
): Promise<TestCloud> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: ':memory:', JWT_SECRET: TEST_JWT_SECRET, ...opts.env });
  const logs: LogRecord[] = [];
  const store = opts.store ?? new SqliteStore(':memory:');
  const running = await startCloudServer(config, { store, sink: (r) => logs.push(r), ...(opts.now ? { now: opts.now } : {}) });
  // Every answer is checked against its declared schema, so the document cannot drift (issue 14).
  const responseViolations: string[] = [];
  watchResponses(running.server, (v) => responseViolations.push(v));
  const secret = new TextEncoder().encode(TEST_JWT_SECRET);
  const token = (groups: string[] = ['superuser']) => mintToken(secret, { subject: 'test', groups });
  const admin = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(running.url + path, {
      method,
      headers: {
        authorization: `Bearer ${await token()}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    ...running,
    async close() {
      await running.close();
      if (!opts.store) await store.close();
      if (responseViolations.length > 0) {
        throw new Error(`responses that do not fit their declared schema:\n${[...new Set(responseViolations)].slice(0, 20).join('\n')}`);
      }
    },
    config,
    logs,
    responseViolations,
    token,
    admin,
    async adminJson(method, path, body) {
      const res = await admin(method, path, body);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async enroll(uuid) {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
      const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
      const res = await admin('PUT', `/admin/devices/${uuid}`, { public_key: publicKeyPem });
      if (res.status !== 201 && res.status !== 200) throw new Error(`enroll failed: ${res.status} ${await res.text()}`);
      return { privateKey, publicKeyPem };
    },
    signed(privateKey, uuid, o) {
      return { ...signDeviceRequest(privateKey, uuid, { ...(opts.now ? { nowMs: opts.now() } : {}), ...o }) };
    },
  };
}

/** An FFCE-shaped blob: magic, then `n` bytes standing for IV || ciphertext || tag. */
export function ffceBlob(n = 64, fill = 7): Buffer {
  return Buffer.concat([Buffer.from('FFCE'), Buffer.alloc(n, fill)]);
}
