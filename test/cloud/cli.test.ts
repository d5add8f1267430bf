// The `fleet` command, run as a real process (bin/fleet.js) against a cloud on a loopback port.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';

const BIN = new URL('../../bin/fleet.js', import.meta.url).pathname;
let cloud: TestCloud;
let dir: string;
/** The cloud's clock: the real one, or stopped where a test holds it (the deployment window). */
let heldAt: number | undefined;

function fleet(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', JWT_SECRET: TEST_JWT_SECRET, FLEET_CLOUD_URL: cloud.url, ...env },
      cwd: dir,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  cloud = await startTestCloud({ now: () => heldAt ?? Date.now() });
  dir = mkdtempSync(join(tmpdir(), 'fleet-cli-'));
});
afterEach(() => {
  heldAt = undefined;
});
afterAll(async () => {
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('fleet', () => {
  it('--help on the program and on a command exits 0', async () => {
    const top = await fleet(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/firmware/);
    const sub = await fleet(['firmware', 'release', '--help']);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toMatch(/--image <file>/);
  });

  it('a usage error exits 2', async () => {
    const r = await fleet(['firmware', 'release', 'only-one-arg']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/missing required argument/);
  });

  it('token mints a super-user JWT the cloud accepts', async () => {
    const r = await fleet(['token', '--subject', 'alice', '--ttl', '60']);
    expect(r.code).toBe(0);
    const { payload } = await jwtVerify(r.stdout.trim(), new TextEncoder().encode(TEST_JWT_SECRET));
    expect(payload).toMatchObject({ sub: 'alice', groups: ['superuser'] });
    const res = await fetch(`${cloud.url}/appconfig`, { headers: { authorization: `Bearer ${r.stdout.trim()}` } });
    expect(res.status).toBe(200);
  });

  it('firmware release (from an image file), list and revoke', async () => {
    const image = join(dir, 'fw.bin');
    writeFileSync(image, Buffer.alloc(4096, 0xa5));
    const rel = await fleet(['firmware', 'release', 'ctl', '0x00000042', 'ctl', '2026.01.01', '--image', image, '--url', 'https://fw.test/1.bin']);
    expect(rel.code).toBe(0);
    expect(JSON.parse(rel.stdout)).toMatchObject({ version: '2026.01.01', size: 4096, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    await fleet(['firmware', 'release', 'ctl', '0x00000042', 'ctl', '2026.02.01']);
    const rev = await fleet(['firmware', 'revoke', 'ctl', '0x00000042', 'ctl', '2026.02.01']);
    expect(rev.code).toBe(0);
    const list = await fleet(['firmware', 'list', 'ctl', '0x00000042', 'ctl']);
    expect(list.stdout).toMatch(/^2026\.01\.01 +RELEASED .*4096 bytes\n2026\.02\.01 +REVOKED /);
  });

  it('a refusal from the cloud exits 1 and prints the error code', async () => {
    const r = await fleet(['firmware', 'release', 'ctl', '0x00000042', 'ctl', '2026.01.01']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/409 release_exists/);
  });

  it('device enroll from a PEM file, list and remove', async () => {
    const pemFile = join(dir, 'dev.pem');
    writeFileSync(pemFile, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }));
    expect((await fleet(['device', 'enroll', 'dev-cli', '--public-key', pemFile])).code).toBe(0);
    expect((await fleet(['device', 'list'])).stdout).toMatch(/dev-cli/);
    expect((await fleet(['device', 'remove', 'dev-cli'])).code).toBe(0);
    expect((await fleet(['device', 'remove', 'dev-cli'])).code).toBe(1);
  });

  it('appconfig set, deploy, show, and delete refused during the deployment, allowed after it', async () => {
    expect((await fleet(['appconfig', 'set', 'svc-func-admin', '--logging', 'info'])).code).toBe(0);
    // The cloud's clock stands still from the deploy on: the deployment window lasts as long as the
    // commands below take, however loaded the machine, and ends when the test moves the clock past it.
    heldAt = Date.now();
    const dep = await fleet(['appconfig', 'deploy', 'svc-func-admin']);
    expect(dep.code).toBe(0);
    expect(JSON.parse(dep.stdout).effective_level).toBe('INFO');
    const show = await fleet(['appconfig', 'show']);
    expect(JSON.parse(show.stdout).functions).toHaveLength(5);
    const bad = await fleet(['appconfig', 'set', 'svc-func-admin', '--logging', 'loud']);
    expect(bad.code).toBe(2);
    const del = await fleet(['appconfig', 'delete', 'svc-func-admin']);
    expect(del.code).toBe(1);
    expect(del.stderr).toMatch(/409 deployment_in_progress/);
    heldAt += cloud.config.appconfigDeploySeconds * 1000 - 1;
    expect((await fleet(['appconfig', 'delete', 'svc-func-admin'])).code, 'the last millisecond of the window').toBe(1);
    heldAt += 2;
    const after = await fleet(['appconfig', 'delete', 'svc-func-admin']);
    expect([after.code, after.stderr]).toEqual([0, '']);
  });

  it('an unreachable cloud exits 3', async () => {
    const r = await fleet(['device', 'list'], { FLEET_CLOUD_URL: 'http://127.0.0.1:9' });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cannot reach the cloud/);
  });

  it('serve starts the cloud on SQLite, creates the JWT secret file, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: join(dir, 'db', 'cloud.sqlite'), JWT_SECRET_FILE: join(dir, 'jwt-secret') },
      cwd: dir,
    });
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 15_000);
      child.stderr.on('data', (c) => {
        err += c;
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const token = await fleet(['token'], { JWT_SECRET: '', JWT_SECRET_FILE: join(dir, 'jwt-secret') });
    const res = await fetch(`${url}/admin/devices`, { headers: { authorization: `Bearer ${token.stdout.trim()}` } });
    expect(res.status).toBe(200);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
