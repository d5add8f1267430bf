// Record UUIDs end to end on a virtual board (docs/storage.md, "Record names"): request targets sent
// byte for byte over a socket (no client normalizes them) to the firmware the Moddable SDK builds for
// the host (SdkBoard), whose HTTP server hands the path over undecoded and whose router decodes each
// segment once; the flash is a real folder. "." and ".." however encoded answer 400 and create
// nothing; a leftover temporary file is neither listed nor allowlisted, and the next boot removes it.
// The same rules run on the memory platform and inside XS in firmware/test-cases/storage-paths.cases.ts.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SdkBoard, startSdkBoard } from '../../harness/virtual-board.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { rawRequest } from '../helpers/raw-http.ts';

const PASSWORD = 'bench-admin-password';
const identity: DeviceIdentity = {
  uuid: 'ctl-paths-0001',
  role: 'controller',
  ethernetMac: '24:0A:C4:E0:00:51',
  wifiMac: '24:0A:C4:10:00:51',
  hardwareClass: 'ctl-s3',
  productHex: '0x00c0ffee',
  firmwareVersion: '2026.01.01',
  build: 'production',
};

let dir: string;
let flash: string;
let board: SdkBoard;
let visual: Record<string, string>;

const start = () => startSdkBoard({ identity, fuseKeyHex: '51'.repeat(32), flashDir: flash, adminPassword: PASSWORD });

async function login(b: SdkBoard): Promise<Record<string, string>> {
  const r = await fetch(`${b.urls.ethernet}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) });
  return { 'visual-token': ((await r.json()) as { token: string }).token };
}

/** One request with its target exactly as given. */
async function raw(method: string, target: string, body?: object) {
  const text = body === undefined ? '' : JSON.stringify(body);
  const head = [`${method} ${target} HTTP/1.1`, 'Host: board', `visual-token: ${visual['visual-token']}`, 'content-type: application/json', `content-length: ${Buffer.byteLength(text)}`, 'connection: close', '', ''].join('\r\n');
  const answer = await rawRequest(board.urls.ethernet!, head + text).answer;
  expect(answer, `an answer to ${method} ${target}`).not.toBeNull();
  return answer!;
}

const recordFiles = () => ['controllers', 'clients'].flatMap((k) => (existsSync(join(flash, 'records', k)) ? readdirSync(join(flash, 'records', k)).map((n) => `${k}/${n}`) : []));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sdk-paths-'));
  flash = join(dir, 'flash');
  board = await start();
  visual = await login(board);
}, 120_000);
afterAll(async () => {
  await board?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('record paths on a virtual board', () => {
  it('answers 400 invalid_uuid for ".", ".." and their single and double encodings, and writes nothing', async () => {
    for (const kind of ['clients', 'controllers']) {
      for (const p of ['%252e', '%252e%252e', '%252E%252E', '%2e', '%2e%2e', '.', '..', 'x.tmp', '%2e%2e%2fbackup.json']) {
        for (const method of ['PUT', 'GET', 'DELETE']) {
          const a = await raw(method, `/api/${kind}/${p}`, method === 'PUT' ? { mac: '02:00:00:00:00:2E', ethernet_mac: '02:00:00:00:00:2E' } : undefined);
          expect(a.status, `${method} /api/${kind}/${p}`).toBe(400);
          expect(a.headers['content-type']).toMatch(/^application\/json/);
          expect(a.json).toEqual({ error: 'invalid_uuid', message: expect.any(String) });
        }
      }
    }
    expect(recordFiles()).toEqual([]);
    expect((await raw('GET', '/api/clients')).json).toEqual([]);
    expect((await raw('GET', '/api/controllers')).json).toEqual([]);
    expect((await raw('GET', '/api/controllers/ctl%252D1')).status).toBe(400);
  });

  it('never lists or allowlists a leftover temporary record, and removes it at the next boot', async () => {
    expect((await raw('PUT', '/api/controllers/ctl-7', { ethernet_mac: '02:00:00:E0:00:07' })).status).toBe(201);
    // The record's file under the names an interrupted write (or the old "." bug) leaves.
    copyFileSync(join(flash, 'records', 'controllers', 'ctl-7'), join(flash, 'records', 'controllers', 'ctl-8.tmp'));
    copyFileSync(join(flash, 'records', 'controllers', 'ctl-7'), join(flash, 'records', 'controllers', '..tmp'));
    expect((await raw('DELETE', '/api/controllers/ctl-7')).status).toBe(204);
    expect((await raw('GET', '/api/controllers')).json).toEqual([]);
    const on = await raw('PUT', '/api/provisioning');
    expect(on.status).toBe(200);
    expect(on.json.allowlist_size).toBe(0);
    expect((await raw('DELETE', '/api/provisioning')).status).toBe(204);

    await board.close();
    board = await start();
    visual = await login(board);
    expect(recordFiles()).toEqual([]);
    expect((await raw('GET', '/api/controllers')).json).toEqual([]);
  });
});
