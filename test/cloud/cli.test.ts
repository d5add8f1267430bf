// The `fleet` command, run as a real process (bin/fleet.js) against a cloud on a loopback port.
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';
import { appImage, sha256Hex } from '../helpers/images.ts';

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

  it('firmware release --image --url (the image elsewhere: checked here, its size and sha256 sent), list and revoke', async () => {
    const image = join(dir, 'fw.bin');
    const bytes = appImage('2026.01.01', { bytes: 4000 });
    writeFileSync(image, bytes);
    const rel = await fleet(['firmware', 'release', 'ctl', '0x00000042', 'ctl', '2026.01.01', '--image', image, '--url', 'https://fw.test/1.bin']);
    expect(rel.code).toBe(0);
    expect(JSON.parse(rel.stdout)).toMatchObject({ version: '2026.01.01', url: 'https://fw.test/1.bin', size: bytes.length, sha256: sha256Hex(bytes) });
    expect((await fleet(['firmware', 'release', 'ctl', '0x00000042', 'ctl', '2026.02.01', '--url', 'https://fw.test/2.bin'])).code).toBe(0);
    const rev = await fleet(['firmware', 'revoke', 'ctl', '0x00000042', 'ctl', '2026.02.01']);
    expect(rev.code).toBe(0);
    const list = await fleet(['firmware', 'list', 'ctl', '0x00000042', 'ctl']);
    expect(list.stdout).toMatch(new RegExp(`^2026\\.01\\.01 +RELEASED .*${bytes.length} bytes\n2026\\.02\\.01 +REVOKED `));
    // An image that names another version is refused before anything is sent.
    const wrong = await fleet(['firmware', 'release', 'ctl', '0x00000042', 'ctl', '2026.03.01', '--image', image, '--url', 'https://fw.test/3.bin']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/image_version_mismatch: The image's app descriptor says version 2026\.01\.01; the release is 2026\.03\.01/);
    expect((await cloud.store.listReleases({ class: 'ctl', productHex: '0x00000042', application: 'ctl' })).map((r) => r.version)).toEqual(['2026.01.01', '2026.02.01']);
  });

  it('firmware release --image uploads the image: the cloud checks it, hosts it, and the manifest points at it; a mismatch exits 1 naming both versions', async () => {
    const image = join(dir, 'hosted.bin');
    const bytes = appImage('2031.10.01', { bytes: 50_000 });
    writeFileSync(image, bytes);
    const wrong = await fleet(['firmware', 'release', 'ctl', '0x00000043', 'ctl', '2031.11.01', '--image', image]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/400 image_version_mismatch .*2031\.10\.01.*2031\.11\.01/);
    const rel = await fleet(['firmware', 'release', 'ctl', '0x00000043', 'ctl', '2031.10.01', '--image', image, '--rollout-groups', 'beta']);
    expect(rel.code).toBe(0);
    const manifest = JSON.parse(rel.stdout);
    expect(manifest).toMatchObject({ url: `${cloud.url}/images/ctl/0x00000043/ctl/2031.10.01.bin`, size: bytes.length, sha256: sha256Hex(bytes) });
    expect(Buffer.from(await (await fetch(manifest.url)).arrayBuffer()).equals(bytes)).toBe(true);
    const list = await fleet(['firmware', 'list', 'ctl', '0x00000043', 'ctl']);
    expect(list.stdout).toMatch(/^2031\.10\.01 +RELEASED .* hosted  rollout active 0 %\n$/);
    const tracks = await fleet(['firmware', 'tracks']);
    expect(tracks.stdout).toMatch(/^ctl 0x00000043 ctl  1 released, 0 revoked, latest 2031\.10\.01$/m);
  });

  it('rollout set, show, pause, resume and end; audit shows who did it', async () => {
    const args = ['ctl', '0x00000043', 'ctl', '2031.10.01'];
    const set = await fleet(['rollout', 'set', ...args, '--percent', '25', '--step-percent', '5', '--step-every', '3600']);
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/^rollout of 2031\.10\.01: ACTIVE at 25 %, \+5 % every 1 h, groups beta\n  outcomes: 0 succeeded, 0 failed, 0 pending/);
    // Who did it: the operator (--as, FLEET_OPERATOR), else the OS user at this host.
    expect((await fleet(['--as', 'alice', 'rollout', 'pause', ...args])).stdout).toMatch(/PAUSED at 25 %[\s\S]*paused: paused by alice/);
    expect(JSON.parse((await fleet(['rollout', 'show', ...args, '--json'])).stdout)).toMatchObject({ state: 'paused', percent: 25, groups: ['beta'] });
    expect((await fleet(['rollout', 'resume', ...args], { FLEET_OPERATOR: 'bob' })).stdout).toMatch(/ACTIVE/);
    expect((await fleet(['rollout', 'end', ...args])).stdout).toMatch(/ended/);
    expect((await fleet(['rollout', 'show', ...args])).code).toBe(1);
    const me = `${userInfo().username}@${hostname()}`;
    const audit = await fleet(['audit', '--limit', '3']);
    expect(audit.stdout).toMatch(new RegExp(`^AT +WHO +VIA +ACTION +STATUS +PATH\n.* ${me.replace(/[.]/g, '\\.')} +api +endRollout +204 `));
    // Filtered by who, by action, by time: the API does it, so the pages (next_before) keep the filter.
    const alice = await fleet(['audit', '--who', 'alice', '--json']);
    expect(JSON.parse(alice.stdout).entries.map((e: { actor: string; action: string }) => [e.actor, e.action])).toEqual([['alice', 'pauseRollout']]);
    const resumes = JSON.parse((await fleet(['audit', '--action', 'resumeRollout', '--json'])).stdout).entries;
    expect(resumes.map((e: { actor: string }) => e.actor)).toEqual(['bob']);
    expect(JSON.parse((await fleet(['audit', '--since', '2999-01-01', '--json'])).stdout).entries).toEqual([]);
    expect(JSON.parse((await fleet(['audit', '--until', '2000-01-01', '--json'])).stdout).entries).toEqual([]);
    expect(JSON.parse((await fleet(['audit', '--since', '2000-01-01', '--who', 'bob', '--json'])).stdout).entries).toHaveLength(1);
    const bad = await fleet(['audit', '--since', 'yesterday']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/since/);
    // A name that is no name is refused before anything is sent.
    const empty = await fleet(['--as', ' ', 'audit']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/--as/);
  });

  it('device list, show and groups: a table for people, --json for scripts, filters for stragglers', async () => {
    const pemFile = join(dir, 'inv.pem');
    writeFileSync(pemFile, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }));
    for (const u of ['inv-cli-1', 'inv-cli-2']) expect((await fleet(['device', 'enroll', u, '--public-key', pemFile, '--label', `panel ${u}`])).code).toBe(0);
    await fetch(`${cloud.url}/ota/ctl/0x00000043/ctl?current_version=2031.10.01`, { headers: { 'x-device-uuid': 'inv-cli-1' } });
    await cloud.cloud.inventory.flush();
    expect((await fleet(['device', 'groups', 'inv-cli-2', 'lab', 'beta'])).stdout).toBe('inv-cli-2: beta, lab\n');
    const table = await fleet(['device', 'list', '--search', 'inv-cli']);
    expect(table.stdout).toMatch(/^UUID +VERSION +TRACK +LAST CHECK +LAST BACKUP +GROUPS +LABEL\ninv-cli-1 +2031\.10\.01 +ctl\/0x00000043\/ctl +\d{4}-\d\d-\d\d \d\d:\d\d +- +- +panel inv-cli-1\ninv-cli-2 +- +- +- +- +beta,lab +panel inv-cli-2\n$/);
    const json = JSON.parse((await fleet(['device', 'list', '--search', 'inv-cli', '--not-seen-days', '1', '--json'])).stdout);
    expect(json.devices.map((d: any) => d.uuid)).toEqual(['inv-cli-2']);
    const stragglers = JSON.parse((await fleet(['device', 'list', '--search', 'inv-cli', '--version', '2031.10.01', '--not-backed-up-days', '7', '--json'])).stdout);
    expect(stragglers.devices.map((d: any) => d.uuid)).toEqual(['inv-cli-1']);
    const show = await fleet(['device', 'show', 'inv-cli-1']);
    expect(show.stdout).toMatch(/^device inv-cli-1  \(panel inv-cli-1\)\n[\s\S]*last check   \S+  2031\.10\.01 on ctl\/0x00000043\/ctl\n/);
    const bad = await fleet(['device', 'list', '--version', '2031.1.1']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/400 invalid_query/);
  });

  it('device label and versions: set, cleared, refused without text or with both; versions per track as a table and --json', async () => {
    // inv-cli-1 and inv-cli-2 are enrolled by the test above; inv-cli-1 checked on ctl/0x00000043/ctl 2031.10.01, inv-cli-2 never (the next test needs it so).
    expect((await fleet(['device', 'label', 'inv-cli-2', 'Hall <b>west</b>'])).stdout).toBe('inv-cli-2: label Hall <b>west</b>\n');
    expect((await cloud.adminJson('GET', '/admin/devices/inv-cli-2')).body.label).toBe('Hall <b>west</b>');
    expect((await fleet(['device', 'label', 'inv-cli-2', '--clear'])).stdout).toBe('inv-cli-2: no label\n');
    expect((await cloud.adminJson('GET', '/admin/devices/inv-cli-2')).body.label).toBeUndefined();
    const neither = await fleet(['device', 'label', 'inv-cli-2']);
    expect([neither.code, neither.stderr.split('\n')[0]]).toEqual([2, 'error: give the label text, or --clear to remove the label']);
    const both = await fleet(['device', 'label', 'inv-cli-2', 'x', '--clear']);
    expect([both.code, both.stderr.split('\n')[0]]).toEqual([2, 'error: give the label text or --clear, not both']);
    const unknown = await fleet(['device', 'label', 'nobody-here', 'x']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/404 device_not_found/);

    await cloud.enroll('ver-cli-3');
    await fetch(`${cloud.url}/ota/ctl/0x00000043/ctl?current_version=2031.09.01`, { headers: { 'x-device-uuid': 'ver-cli-3' } });
    await cloud.cloud.inventory.flush();
    const versions = await fleet(['device', 'versions', '--product-hex', '0x00000043']);
    expect(versions.stdout).toBe(
      'TRACK               VERSION     DEVICES  SHARE  STATUS\n' +
        'ctl/0x00000043/ctl  2031.10.01  1        50 %   RELEASED\n' +
        'ctl/0x00000043/ctl  2031.09.01  1        50 %   not released\n',
    );
    const json = JSON.parse((await fleet(['device', 'versions', '--product-hex', '0x00000043', '--json'])).stdout);
    expect(json).toEqual({ tracks: [{ class: 'ctl', product_hex: '0x00000043', application: 'ctl', devices: 2, versions: [{ version: '2031.10.01', devices: 1, status: 'RELEASED' }, { version: '2031.09.01', devices: 1, status: null }] }] });
    expect((await fleet(['device', 'versions', '--application', 'nothing'])).stdout).toBe('no device has checked for updates on a track\n');
    const bad = await fleet(['device', 'versions', '--product-hex', '43']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/400 invalid_query/);
  });

  it('device list --any: the README\'s stragglers, not seen or not backed up; both without it, as the help says', async () => {
    // inv-cli-1 checked just now, inv-cli-2 never; neither has a backup (the test above).
    const both = JSON.parse((await fleet(['device', 'list', '--search', 'inv-cli', '--not-seen-days', '1', '--not-backed-up-days', '7', '--json'])).stdout);
    expect(both.devices.map((d: any) => d.uuid)).toEqual(['inv-cli-2']);
    const either = JSON.parse((await fleet(['device', 'list', '--search', 'inv-cli', '--not-seen-days', '1', '--not-backed-up-days', '7', '--any', '--json'])).stdout);
    expect(either.devices.map((d: any) => d.uuid)).toEqual(['inv-cli-1', 'inv-cli-2']);
    const help = (await fleet(['device', 'list', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('--any devices that meet any of the conditions given');
    expect(help).toContain('without it, devices that meet them all (both, for two)');
    const anyAlone = await fleet(['device', 'list', '--any']);
    expect(anyAlone.code).toBe(2);
    expect(anyAlone.stderr).toMatch(/^error: --any combines conditions: give at least one of --not-seen-days, --not-backed-up-days, --crashed-days, --low-heap, --behind, --failed-update\n/);
  });

  it('a refusal from the cloud exits 1 and prints the error code', async () => {
    const r = await fleet(['firmware', 'release', 'ctl', '0x00000042', 'ctl', '2026.01.01', '--url', 'https://fw.test/1.bin']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/409 release_exists/);
  });

  it('firmware release with neither --image nor --url is refused (exit 2, nothing stored); --no-image says what it means', async () => {
    const track = { class: 'ctl', productHex: '0x00000044', application: 'ctl' };
    const bare = await fleet(['firmware', 'release', 'ctl', '0x00000044', 'ctl', '2026.02.01', '--rollout-percent', '10']);
    expect([bare.code, bare.stdout]).toEqual([2, '']);
    expect(bare.stderr).toBe(
      'fleet: release 2026.02.01 has no image: devices offered it would have nothing to download. Give --image <file> (the cloud hosts it) or --url <url> (with --image, or --size and --sha256); for a version devices already run and never download (a factory image), say --no-image\n',
    );
    const both = await fleet(['firmware', 'release', 'ctl', '0x00000044', 'ctl', '2026.02.01', '--no-image', '--url', 'https://fw.test/x.bin']);
    expect([both.code, both.stderr]).toEqual([2, 'fleet: --no-image and --url: a release without an image has no url, size or sha256; give one or the other\n']);
    expect(await cloud.store.listReleases(track)).toEqual([]);
    const factory = await fleet(['firmware', 'release', 'ctl', '0x00000044', 'ctl', '2025.12.01', '--no-image']);
    expect(factory.code).toBe(0);
    expect(JSON.parse(factory.stdout)).toMatchObject({ version: '2025.12.01', status: 'RELEASED' });
    expect(JSON.parse(factory.stdout).url).toBeUndefined();
    expect(factory.stderr).toBe('released 2025.12.01 without an image: devices that run it are told they are up to date; a device on an older version offered it would have nothing to download\n');
  });

  it('firmware release with a rollout prints the rollout it made: reach, next step, when it pauses', async () => {
    const manual = await fleet(['firmware', 'release', 'ctl', '0x00000045', 'ctl', '2026.03.01', '--url', 'https://fw.test/3.bin', '--rollout-percent', '10', '--rollout-groups', 'beta']);
    expect(manual.code).toBe(0);
    expect(JSON.parse(manual.stdout)).toMatchObject({ version: '2026.03.01', url: 'https://fw.test/3.bin' });
    expect(manual.stderr).toBe(
      [
        'rollout of 2026.03.01: ACTIVE at 10 %, offered to 10 % of devices (a stable share by UUID) and groups beta',
        '  next step: by hand, no schedule: fleet rollout set ctl 0x00000045 ctl 2026.03.01 --percent <n>; fleet rollout end ctl 0x00000045 ctl 2026.03.01 releases it to every device',
        '  pauses by itself when failed installs reach 20 % of at least 5 outcomes (fleet rollout show ctl 0x00000045 ctl 2026.03.01)',
        '',
      ].join('\n'),
    );
    // A schedule: the next step is the next percentage, one interval after the rollout was made.
    heldAt = Date.parse('2026-05-01T10:00:00Z');
    const stepped = await fleet(['firmware', 'release', 'ctl', '0x00000045', 'ctl', '2026.04.01', '--url', 'https://fw.test/4.bin', '--rollout-percent', '10', '--rollout-step-percent', '15', '--rollout-step-every', '86400', '--error-threshold', '30']);
    expect(stepped.code).toBe(0);
    expect(stepped.stderr).toBe(
      [
        'rollout of 2026.04.01: ACTIVE at 10 %, offered to 10 % of devices (a stable share by UUID)',
        '  next step: 25 % at 2026-05-02T10:00:00.000Z (+15 % every 1 day until 100 %)',
        '  pauses by itself when failed installs reach 30 % of at least 5 outcomes (fleet rollout show ctl 0x00000045 ctl 2026.04.01)',
        '',
      ].join('\n'),
    );
    const groupsOnly = await fleet(['firmware', 'release', 'ctl', '0x00000046', 'ctl', '2026.04.01', '--url', 'https://fw.test/5.bin', '--rollout-groups', 'beta']);
    expect(groupsOnly.stderr).toMatch(/^rollout of 2026\.04\.01: ACTIVE at 0 %, offered to groups beta\n/);
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

  it('an unreachable cloud exits 3 with a sentence that says where it looked and how to start it or point at it', async () => {
    // A port where nothing listens (fetch itself refuses a few low ports such as 9, with "bad port").
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const closed = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
    const r = await fleet(['device', 'list'], { FLEET_CLOUD_URL: `http://127.0.0.1:${closed}` });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(
      `fleet: the cloud at http://127.0.0.1:${closed} could not be reached (connect ECONNREFUSED 127.0.0.1:${closed}): start it (npm start, or fleet serve) or point --cloud (or FLEET_CLOUD_URL) at a running cloud\n`,
    );
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
        // The console's address follows, for an operator who just ran `npm start`.
        const m = /listening on (http:\/\/\S+)[^\n]*\noperator console: (\S+) /.exec(err);
        if (m) {
          clearTimeout(timer);
          expect(m[2]).toBe(`${m[1]}/console`);
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
