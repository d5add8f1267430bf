// `fleet image sign | verify | key generate`, run as the real command (bin/fleet.js) with keys the real
// openssl made: signing with one to three keys and appending, verify naming the key slot, and every
// refusal with its sentence and exit code (1 for an image verify refuses, 2 for usage and bad keys),
// writing nothing when it refuses.
import { createHash, createPrivateKey } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicKeyDigest, SIG_BLOCK_BYTES, SIG_SECTOR_BYTES } from '../../firmware/image/secure-boot.ts';
import { runFleet, type FleetRun } from '../helpers/fleet-cli.ts';
import { appImage } from '../helpers/images.ts';
import { openssl, opensslEcKey, opensslRsaKey } from '../helpers/openssl.ts';

let dir: string;
let image: string;
const keys: Record<'k1' | 'k2' | 'k3' | 'k4' | 'enc' | 'small', { key: string; pub: string }> = {} as never;
const digestOf = (pem: string, passphrase?: string) => publicKeyDigest(createPrivateKey({ key: readFileSync(pem), ...(passphrase ? { passphrase } : {}) })).toString('hex');
const at = (name: string) => join(dir, name);
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const image_ = (...args: string[]) => runFleet(['image', ...args], { cwd: dir });

/** A refusal: the exit code, one `fleet:` line matching `message`, and no stack or errno name. */
function refused(r: FleetRun, code: number, message: RegExp): void {
  expect(r.stderr).toMatch(message);
  expect(r.stderr).toMatch(/^fleet: /);
  expect(r.stderr).not.toMatch(/\n {4}at |ERR_OSSL|ENOENT|Error:/);
  expect(r.code).toBe(code);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-image-sign-'));
  image = at('app.bin');
  writeFileSync(image, appImage('2026.05.01', { bytes: 6000 }));
  for (const name of ['k1', 'k2', 'k3', 'k4'] as const) keys[name] = opensslRsaKey(dir, `${name}.pem`);
  keys.enc = opensslRsaKey(dir, 'enc.pem', 3072, ['-aes256', '-pass', 'pass:correct horse']);
  keys.small = opensslRsaKey(dir, 'small.pem', 2048);
  opensslEcKey(dir, 'ec.pem');
  writeFileSync(at('pass.txt'), 'correct horse\n');
  writeFileSync(at('wrong-pass.txt'), 'battery staple\n');
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleet image key generate', () => {
  it('writes an RSA-3072 key 0600 and its public key, prints the digest, refuses to overwrite without --force', { timeout: 120_000 }, async () => {
    const r = await image_('key', 'generate', '-o', 'new.pem', '--pub', 'new.pub.pem');
    expect(r.code).toBe(0);
    expect(statSync(at('new.pem')).mode & 0o777).toBe(0o600);
    expect(openssl(['pkey', '-in', at('new.pem'), '-noout', '-text']).stdout).toMatch(/^Private-Key: \(3072 bit, 2 primes\)/);
    expect(openssl(['pkey', '-pubin', '-in', at('new.pub.pem'), '-noout']).status).toBe(0);
    expect(r.stdout).toContain(`key digest (SECURE_BOOT_DIGESTn): ${digestOf(at('new.pem'))}`);
    expect(r.stdout + r.stderr).not.toMatch(/PRIVATE KEY/);

    const before = readFileSync(at('new.pem'), 'utf8');
    refused(await image_('key', 'generate', '-o', 'new.pem'), 2, /new\.pem already exists: a key is never overwritten .*add --force/);
    refused(await image_('key', 'generate', '-o', 'other.pem', '--pub', 'new.pub.pem'), 2, /new\.pub\.pem already exists/);
    expect(existsSync(at('other.pem'))).toBe(false);
    expect(readFileSync(at('new.pem'), 'utf8')).toBe(before);

    // --force replaces it, and the new file is 0600 even where the old one was readable by all.
    chmodSync(at('new.pem'), 0o644);
    expect((await image_('key', 'generate', '-o', 'new.pem', '--force')).code).toBe(0);
    expect(readFileSync(at('new.pem'), 'utf8')).not.toBe(before);
    expect(statSync(at('new.pem')).mode & 0o777).toBe(0o600);
    refused(await image_('key', 'generate', '-o', 'same.pem', '--pub', 'same.pem'), 2, /cannot be written to the same file/);
    refused(await image_('key', 'generate', '-o', join('no-such-folder', 'k.pem')), 2, /cannot open .*no-such-folder.*no such file or folder/);
  });
});

describe('fleet image sign and verify', () => {
  it('signs with an openssl key; verify with the key or its public key names slot 0, the image digest and the key digest', { timeout: 120_000 }, async () => {
    const r = await image_('sign', '--key', 'k1.pem', '-o', 'signed.bin', 'app.bin');
    expect(r.code).toBe(0);
    const original = readFileSync(image);
    const signed = readFileSync(at('signed.bin'));
    const contentLength = Math.ceil(original.length / SIG_SECTOR_BYTES) * SIG_SECTOR_BYTES;
    expect(signed.length).toBe(contentLength + SIG_SECTOR_BYTES);
    expect(signed.subarray(0, original.length).equals(original)).toBe(true);
    const digest = sha256(signed.subarray(0, contentLength));
    expect(r.stdout).toContain(`signature block 0: key digest ${digestOf(keys.k1.key)} (k1.pem)`);

    for (const trust of [['--key', 'k1.pem'], ['--pub', 'k1.pem.pub.pem']]) {
      const v = await image_('verify', ...trust, 'signed.bin');
      expect(v.code).toBe(0);
      expect(v.stdout).toMatch(/^signed\.bin: verified, signed in key slot 0 \(signature block 0 of 1\)/);
      expect(v.stdout).toContain(`image digest: ${digest}`);
      expect(v.stdout).toContain(`key digest:   ${digestOf(keys.k1.key)}`);
    }
    const json = JSON.parse((await image_('verify', '--pub', 'k1.pem.pub.pem', '--json', 'signed.bin')).stdout);
    expect(json).toMatchObject({ ok: true, digest, contentLength, signedBy: { block: 0, keyDigest: digestOf(keys.k1.key), key: 'k1.pem.pub.pem' }, failure: null });

    const info = await image_('info', 'signed.bin');
    expect(info.code).toBe(0);
    expect(info.stdout).toMatch(/^signed\.bin: ESP32-S3 app image, [\d,]+ bytes, valid$/m);
    expect(info.stdout).toContain(`signature block 0: key digest ${digestOf(keys.k1.key)}, sound`);
    expect((await image_('info', 'app.bin')).stdout).toContain('secure boot v2: not signed');
  });

  it('signs with three keys, or appends keys to a signed image (rotation), up to three blocks; verify names the slot that signed', { timeout: 180_000 }, async () => {
    expect((await image_('sign', '--key', 'k1.pem', '--key', 'k2.pem', '--key', 'k3.pem', '-o', 'three.bin', 'app.bin')).code).toBe(0);
    const slot = async (file: string, pub: string) => /signed in key slot (\d)/.exec((await image_('verify', '--pub', pub, file)).stdout)?.[1];
    expect(await slot('three.bin', 'k3.pem.pub.pem')).toBe('2');

    expect((await image_('sign', '--key', 'k1.pem', '-o', 'rot.bin', 'app.bin')).code).toBe(0);
    const appended = await image_('sign', '--append', '--key', 'k2.pem', '-o', 'rot2.bin', 'rot.bin');
    expect(appended.code).toBe(0);
    expect(appended.stdout).toMatch(/signature block 0: key digest [0-9a-f]{64} \(kept from the image\)\n {2}signature block 1: key digest [0-9a-f]{64} \(k2\.pem\)/);
    // The old block is kept byte for byte: a board that trusts only the old key still boots the image.
    const [rot, rot2] = [readFileSync(at('rot.bin')), readFileSync(at('rot2.bin'))];
    expect(rot2.length).toBe(rot.length);
    const sector = rot.length - SIG_SECTOR_BYTES;
    expect(rot2.subarray(0, sector + SIG_BLOCK_BYTES).equals(rot.subarray(0, sector + SIG_BLOCK_BYTES))).toBe(true);
    expect(await slot('rot2.bin', 'k1.pem.pub.pem')).toBe('0');
    expect(await slot('rot2.bin', 'k2.pem.pub.pem')).toBe('1');

    refused(await image_('sign', '--append', '--key', 'k2.pem', '-o', 'x.bin', 'rot2.bin'), 2, /rot2\.bin's signature block 1 is already signed by k2\.pem/);
    refused(await image_('sign', '--append', '--key', 'k3.pem', '--key', 'k4.pem', '-o', 'x.bin', 'rot2.bin'), 2, /a signature sector holds 3 blocks: rot2\.bin has 2, and 2 more were asked/);
    refused(await image_('sign', '--key', 'k4.pem', '-o', 'x.bin', 'rot2.bin'), 2, /rot2\.bin is already signed \(2 signature blocks\): add --append/);
    refused(await image_('sign', '--key', 'k1.pem', '--key', 'k2.pem', '--key', 'k3.pem', '--key', 'k4.pem', '-o', 'x.bin', 'app.bin'), 2, /a signature sector holds 3 blocks: 4 keys given/);
    refused(await image_('sign', '--key', 'k1.pem', '--key', 'k1.pem', '-o', 'x.bin', 'app.bin'), 2, /k1\.pem is the same key as k1\.pem: each block needs its own key/);
    expect(existsSync(at('x.bin'))).toBe(false);
  });

  it('refuses keys it cannot sign with: RSA-2048, EC, encrypted without (or with a wrong) passphrase, a public key, not a key, a missing file', { timeout: 180_000 }, async () => {
    const sign = (...args: string[]) => image_('sign', ...args, '-o', 'x.bin', 'app.bin');
    refused(await sign('--key', 'small.pem'), 2, /^fleet: small\.pem: Secure Boot v2 RSA keys are 3072 bits; this one is 2048$/m);
    refused(await sign('--key', 'ec.pem'), 2, /^fleet: ec\.pem: the ESP32-S3 verifies Secure Boot v2 with RSA-3072 only; this is an EC key$/m);
    refused(await sign('--key', 'enc.pem'), 2, /^fleet: enc\.pem is encrypted: give its passphrase with --passphrase-file <file>$/m);
    refused(await sign('--key', 'enc.pem', '--passphrase-file', 'wrong-pass.txt'), 2, /^fleet: enc\.pem: the passphrase does not decrypt this key$/m);
    refused(await sign('--key', 'k1.pem.pub.pem'), 2, /^fleet: k1\.pem\.pub\.pem is a public key: signing needs the private key/m);
    refused(await sign('--key', 'app.bin'), 2, /^fleet: app\.bin is not a PEM private key/m);
    refused(await sign('--key', 'missing.pem'), 2, /^fleet: the signing key: cannot open missing\.pem: no such file or folder; check the path$/m);
    refused(await sign(), 2, /give the signing key: --key k\.pem/);
    refused(await image_('sign', '--key', 'k1.pem', '-o', 'x.bin', 'missing.bin'), 2, /^fleet: the image: cannot open missing\.bin: no such file or folder/m);
    expect(existsSync(at('x.bin'))).toBe(false);

    const ok = await sign('--key', 'enc.pem', '--passphrase-file', 'pass.txt');
    expect(ok.code).toBe(0);
    const v = await image_('verify', '--pub', 'enc.pem.pub.pem', 'x.bin');
    expect(v.stdout).toContain(`key digest:   ${digestOf(keys.enc.key, 'correct horse')}`);
    expect(v.code).toBe(0);
  });

  it('verify refuses an unsigned image, another key, a changed image, a damaged block and a forged signature, each in its own words (exit 1)', { timeout: 180_000 }, async () => {
    expect((await image_('sign', '--key', 'k1.pem', '-o', 'good.bin', 'app.bin')).code).toBe(0);
    const good = readFileSync(at('good.bin'));
    const sector = good.length - SIG_SECTOR_BYTES;
    const variant = (name: string, at_: number, xor = 0x01) => {
      const copy = Buffer.from(good);
      copy[at_] = copy[at_]! ^ xor;
      writeFileSync(at(name), copy);
    };
    variant('tampered.bin', 200);
    variant('damaged.bin', sector + 600);
    variant('forged.bin', sector + 900);
    // The forged one's CRC made good, so that only the RSA-PSS signature is wrong.
    const forged = readFileSync(at('forged.bin'));
    const { romCrc32Le } = await import('../../firmware/image/otadata.ts');
    forged.writeUInt32LE(romCrc32Le(0, forged.subarray(sector, sector + 1196)), sector + 1196);
    writeFileSync(at('forged.bin'), forged);

    const verify = (file: string, ...trust: string[]) => image_('verify', ...(trust.length ? trust : ['--pub', 'k1.pem.pub.pem']), file);
    refused(await verify('app.bin'), 1, /^fleet: app\.bin is not signed: the image is [\d]+ bytes, not a multiple of 4096/m);
    refused(await verify('good.bin', '--pub', 'k2.pem.pub.pem'), 1, new RegExp(`^fleet: good\\.bin is signed by another key: its blocks carry key digest ${digestOf(keys.k1.key)} \\(block 0\\); the key given: ${digestOf(keys.k2.key)} \\(k2\\.pem\\.pub\\.pem\\)$`, 'm'));
    refused(await verify('tampered.bin'), 1, /^fleet: tampered\.bin was changed after it was signed: signature block 0: the image digest [0-9a-f]{64} is not the signed [0-9a-f]{64}/m);
    refused(await verify('damaged.bin'), 1, /^fleet: damaged\.bin has a damaged signature block: signature block 0 is damaged: CRC32 0x[0-9a-f]{8} stored, 0x[0-9a-f]{8} calculated$/m);
    refused(await verify('forged.bin'), 1, /^fleet: forged\.bin's signature does not verify: signature block 0: the RSA-PSS signature does not verify with its key$/m);
    refused(await verify('good.bin', '--pub', 'ec.pem'), 2, /ec\.pem: the ESP32-S3 verifies Secure Boot v2 with RSA-3072 only/);
    refused(await image_('verify', 'good.bin'), 2, /give the key to trust: --key k\.pem or --pub pub\.pem/);
    refused(await verify('missing.bin'), 2, /the image: cannot open missing\.bin: no such file or folder/);

    const json = await image_('verify', '--pub', 'k1.pem.pub.pem', '--json', 'tampered.bin');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, signedBy: null, failure: { kind: 'tampered' }, blocks: [{ index: 0, state: 'tampered' }] });

    // info needs no key: it says which blocks are sound, and exits 0 (the app image itself is valid).
    const info = await image_('info', 'damaged.bin');
    expect(info.stdout).toMatch(/signature block 0: key digest [0-9a-f]{64}, damaged: signature block 0 is damaged: CRC32/);
    expect((await image_('info', 'forged.bin')).stdout).toMatch(/signature block 0: key digest [0-9a-f]{64}, bad signature: /);
  });
});
