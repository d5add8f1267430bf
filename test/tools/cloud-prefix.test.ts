// A cloud behind a reverse proxy at a path prefix (--cloud http://host/fleet-api) works for every
// cloud command and for the simulator: the prefix is kept for every request.
import { generateKeyPairSync } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';
import { runFleet } from '../helpers/fleet-cli.ts';

let cloud: TestCloud;
let proxy: Server;
let proxied: string;
let dir: string;
/** What reached the cloud through the proxy, as "METHOD /path". */
const forwarded: string[] = [];

/** A reverse proxy on loopback that serves the cloud under /fleet-api only, as nginx's `location /fleet-api/`. */
function startProxy(target: URL): Promise<Server> {
  const server = createServer((req, res) => {
    const m = /^\/fleet-api(\/.*)$/.exec(req.url ?? '');
    if (!m) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`proxy: nothing at ${req.url}\n`);
      return;
    }
    forwarded.push(`${req.method} ${m[1]!.replace(/\?.*/, '')}`);
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: m[1], headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  cloud = await startTestCloud();
  proxy = await startProxy(new URL(cloud.url));
  proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/fleet-api`;
  dir = mkdtempSync(join(tmpdir(), 'cloud-prefix-'));
});
afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ JWT_SECRET: TEST_JWT_SECRET });

describe('a cloud behind a reverse proxy at /fleet-api', () => {
  it('every cloud command keeps the prefix', { timeout: 120_000 }, async () => {
    const pem = join(dir, 'dev.pem');
    writeFileSync(pem, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }));
    const run = (...args: string[]) => runFleet(['--cloud', proxied, ...args], { env: env() });
    const steps: [string[], RegExp][] = [
      [['firmware', 'release', 'ctl', '0x00000042', 'ctl', '2026.01.01', '--url', 'https://fw.example/ctl/2026.01.01.bin'], /"status": "RELEASED"/],
      [['firmware', 'revoke', 'ctl', '0x00000042', 'ctl', '2026.01.01'], /"status": "REVOKED"/],
      [['firmware', 'list', 'ctl', '0x00000042', 'ctl'], /^2026\.01\.01 +REVOKED/],
      [['device', 'enroll', 'dev-proxied', '--public-key', pem], /"uuid": "dev-proxied"/],
      [['device', 'list'], /dev-proxied/],
      [['device', 'remove', 'dev-proxied'], /removed dev-proxied/],
      [['appconfig', 'set', 'svc-func-ota', '--logging', 'INFO'], /"staged_level": "INFO"|INFO/],
      [['appconfig', 'show', 'svc-func-ota'], /svc-func-ota/],
      [['appconfig', 'show'], /svc-func-health/],
    ];
    for (const [args, out] of steps) {
      const r = await run(...args);
      expect([args.join(' '), r.code, r.stderr]).toEqual([args.join(' '), 0, '']);
      expect(r.stdout).toMatch(out);
    }
    // Through the prefix, with a trailing slash too.
    expect((await runFleet(['--cloud', `${proxied}/`, 'device', 'list'], { env: env() })).code).toBe(0);
    expect(forwarded).toContain('PUT /admin/devices/dev-proxied');
    expect(forwarded).toContain('GET /appconfig');
  });

  it('the simulator keeps the prefix for every request', { timeout: 120_000 }, async () => {
    await cloud.admin('PUT', '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.02.01', { url: 'https://fw.example/a.bin', size: 1000, sha256: 'ab'.repeat(32) });
    forwarded.length = 0;
    const r = await runFleet(['--cloud', proxied, 'simulate', '--devices', '3', '--size', '1024', '--big-every', '0'], { env: env() });
    expect([r.code, r.stdout]).toEqual([0, expect.stringMatching(/backups: intact=3 lost=0 mixed=0/)]);
    expect(forwarded.filter((f) => f.startsWith('POST /devices/'))).toHaveLength(6);
    expect(forwarded.filter((f) => f.startsWith('GET /ota/'))).toHaveLength(3);
    // Its clean-up too: each device's backup, then the device.
    expect(forwarded.filter((f) => f.startsWith('DELETE /devices/'))).toHaveLength(3);
    expect(forwarded.filter((f) => f.startsWith('DELETE /admin/devices/'))).toHaveLength(3);
  });

  it('without the prefix the proxy has nothing: the command does not silently reach the cloud', async () => {
    const r = await runFleet(['--cloud', proxied.replace('/fleet-api', ''), 'device', 'list'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('GET /admin/devices: 404 proxy: nothing at /admin/devices');
  });
});
