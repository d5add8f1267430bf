// `fleet firmware signing` (docs/secure-boot.md, The cloud), run as a real process against a cloud on a
// loopback port: shows and sets a track's signing setting from PEM keys made by openssl (private and
// public) and by node, or from digests; a bad key file or option is a usage error (exit 2) that names
// it and changes nothing; a key's label is what --label says (never its file's name); then `fleet
// firmware release --image` of a signed image on that track, and `fleet firmware list` naming the key.
import { execFileSync } from 'node:child_process';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicKeyDigest, signImage } from '../../firmware/image/secure-boot.ts';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';
import { runFleet } from '../helpers/fleet-cli.ts';
import { appImage } from '../helpers/images.ts';

const TRACK = { class: 'ctl-s3', productHex: '0x00c0ffee', application: 'ctl-s3' };
const ARGS = ['firmware', 'signing', 'ctl-s3', '0x00c0ffee', 'ctl-s3'];
let cloud: TestCloud;
let dir: string;
let digestA: string;
let digestB: string;

const fleet = (args: string[]) => runFleet(args, { cwd: dir, env: { JWT_SECRET: TEST_JWT_SECRET, FLEET_CLOUD_URL: cloud.url } });
const at = (name: string) => join(dir, name);

beforeAll(async () => {
  cloud = await startTestCloud();
  dir = mkdtempSync(join(tmpdir(), 'fleet-signing-'));
  execFileSync('openssl', ['genrsa', '-out', at('a.pem'), '3072'], { stdio: 'ignore' });
  execFileSync('openssl', ['rsa', '-in', at('a.pem'), '-pubout', '-out', at('a.pub.pem')], { stdio: 'ignore' });
  execFileSync('openssl', ['genrsa', '-out', at('small.pem'), '2048'], { stdio: 'ignore' });
  execFileSync('openssl', ['rsa', '-in', at('a.pem'), '-aes256', '-passout', 'pass:secret', '-out', at('enc.pem')], { stdio: 'ignore' });
  const b = generateKeyPairSync('rsa', { modulusLength: 3072 });
  writeFileSync(at('b.pub.pem'), b.publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(at('b.pem'), b.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  writeFileSync(at('notes.txt'), 'not a key\n');
  digestA = publicKeyDigest(createPrivateKey(readFileSync(at('a.pem')))).toString('hex');
  digestB = publicKeyDigest(b.publicKey).toString('hex');
});
afterAll(async () => {
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('fleet firmware signing', () => {
  it('shows a track never set: off, no keys', async () => {
    const r = await fleet(ARGS);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('ctl-s3/0x00c0ffee/ctl-s3: signing off (a signed image is accepted, its key named), never set\n  no trusted keys\n');
  });

  it('--require with keys from PEM files (an openssl private key, a node public key): their digests, labelled as --label says, never with the file name', async () => {
    const r = await fleet([...ARGS, '--require', '--key', 'a.pem', '--key', 'b.pub.pem', '--label', 'release 2026']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ctl-s3\/0x00c0ffee\/ctl-s3: signed images required, set \d{4}-/);
    expect(r.stdout).toContain(`  ${digestA}  release 2026\n  ${digestB}  (no label)\n`);
    expect((await cloud.store.getTrackSigning(TRACK))?.keys).toEqual([{ digest: digestA, label: 'release 2026' }, { digest: digestB }]);
    // openssl's public key file gives the same digest as its private key; given again without a label, the key keeps its own.
    const pub = await fleet([...ARGS, '--require', '--key', 'a.pub.pem', '--json']);
    expect(JSON.parse(pub.stdout)).toMatchObject({ required: true, keys: [{ digest: digestA, label: 'release 2026' }] });
    expect(JSON.parse(pub.stdout).keys).toHaveLength(1);
  });

  it('a bad key file or option: exit 2, named, nothing changed', async () => {
    const before = await cloud.store.getTrackSigning(TRACK);
    const cases: [string[], RegExp][] = [
      [['--key', 'small.pem'], /small\.pem: Secure Boot v2 RSA keys are 3072 bits; this one is 2048/],
      [['--key', 'notes.txt'], /--key notes\.txt is not a PEM key/],
      [['--key', 'enc.pem'], /--key enc\.pem is encrypted: give its public key instead \(openssl pkey -in it -pubout -out pub\.pem\)/],
      [['--key', 'missing.pem'], /cannot open missing\.pem: no such file or folder/],
      [['--digest', 'abc'], /must be a key digest, 64 hexadecimal digits: abc/],
      [['--require', '--off'], /--off.*cannot be used with.*--require|--require.*cannot be used with.*--off/],
      [['--key', 'b.pem', '--label', 'one', '--label', 'two'], /^fleet: 2 labels for 1 key: each --label names the key given in the same place/],
      [['--label', 'lonely'], /^fleet: --label names the keys given with --key or --digest/],
    ];
    for (const [extra, why] of cases) {
      const r = await fleet([...ARGS, ...extra]);
      expect(r.code, extra.join(' ')).toBe(2);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).not.toMatch(/at .*\.ts:\d+|Error:/);
    }
    expect(await cloud.store.getTrackSigning(TRACK)).toEqual(before);
  });

  it('the cloud refusing a setting: exit 1 with its code (a digest listed twice)', async () => {
    const r = await fleet([...ARGS, '--key', 'a.pem', '--digest', digestA]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/400 invalid_track_signing keys\[1\]\.digest: [0-9a-f]{64} is listed twice/);
  });

  it('a release of an image signed by a key the track does not trust is refused (exit 1, the keys named); a trusted one is released and listed with its signer', async () => {
    const image = appImage('2026.05.01');
    writeFileSync(at('by-b.bin'), signImage(image, [createPrivateKey(readFileSync(at('b.pem')))]));
    const refused = await fleet(['firmware', 'release', 'ctl-s3', '0x00c0ffee', 'ctl-s3', '2026.05.01', '--image', 'by-b.bin']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('400 image_signer_not_trusted');
    expect(refused.stderr).toContain(`Keys found: ${digestB}; trusted: ${digestA}`);
    expect(await cloud.store.getImage(TRACK, '2026.05.01')).toBeNull();

    const set = await fleet([...ARGS, '--key', 'b.pem', '--label', 'lab']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/signed images required/); // --require kept
    const released = await fleet(['firmware', 'release', 'ctl-s3', '0x00c0ffee', 'ctl-s3', '2026.05.01', '--image', 'by-b.bin']);
    expect(released.code, released.stderr).toBe(0);
    expect(JSON.parse(released.stdout)).toMatchObject({ version: '2026.05.01', signed_by: { block: 0, key_digest: digestB, key_label: 'lab' } });
    const list = await fleet(['firmware', 'list', 'ctl-s3', '0x00c0ffee', 'ctl-s3']);
    expect(list.stdout).toMatch(new RegExp(`^2026\\.05\\.01  RELEASED .* hosted  signed by ${digestB.slice(0, 16)}… \\(lab\\)$`, 'm'));
  });

  it('--off keeps the keys; --digest replaces them', async () => {
    const off = await fleet([...ARGS, '--off']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain('signing off');
    expect(off.stdout).toContain(`  ${digestB}  lab\n`);
    const byDigest = await fleet([...ARGS, '--digest', digestA.toUpperCase()]);
    expect(byDigest.code, byDigest.stderr).toBe(0);
    expect(await cloud.store.getTrackSigning(TRACK)).toMatchObject({ required: false, keys: [{ digest: digestA }] });
  });
});
