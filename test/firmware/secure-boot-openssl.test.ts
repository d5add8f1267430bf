// The third-party check of our Secure Boot v2 signature blocks: openssl alone verifies them. A key made
// by `openssl genpkey`, an image signed by `fleet image sign`; then, with no code of ours in the
// verification, the block's signature (its 384 little-endian bytes reversed) is checked over the image
// digest (`openssl dgst -sha256` of everything before the signature sector) with
// `openssl pkeyutl -verify … rsa_padding_mode:pss rsa_pss_saltlen:32 digest:sha256`, as the ROM checks
// it; and a changed digest is refused. The same check passes on Espressif's own signed bootloaders.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFleet } from '../helpers/fleet-cli.ts';
import { appImage } from '../helpers/images.ts';
import { openssl, opensslRsaKey } from '../helpers/openssl.ts';

const SECTOR = 4096;
const BLOCK = 1216;
// Offsets in a block (Espressif's "Signature Block Format").
const DIGEST_AT = 4;
const N_AT = 36;
const E_AT = 420;
const SIG_AT = 812;
const RSA_BYTES = 384;

let dir: string;
const at = (name: string) => join(dir, name);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleet-sb-openssl-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Block `index` of a signed file's last sector, split into the files openssl reads. */
function extract(file: string, index: number, name: string) {
  const signed = readFileSync(file);
  const contentLength = signed.length - SECTOR;
  const block = signed.subarray(contentLength + index * BLOCK, contentLength + (index + 1) * BLOCK);
  const files = { content: at(`${name}.content.bin`), digest: at(`${name}.digest.bin`), sig: at(`${name}.sig.bin`) };
  writeFileSync(files.content, signed.subarray(0, contentLength));
  // The image digest, computed by openssl from the content; it must be the one the block carries.
  const dgst = openssl(['dgst', '-sha256', '-binary', '-out', files.digest, files.content]);
  expect(dgst.status).toBe(0);
  writeFileSync(files.sig, Buffer.from(block.subarray(SIG_AT, SIG_AT + RSA_BYTES)).reverse());
  return { ...files, block };
}

function pssVerify(pub: string, digest: string, sig: string) {
  return openssl(['pkeyutl', '-verify', '-pubin', '-inkey', pub, '-pkeyopt', 'rsa_padding_mode:pss', '-pkeyopt', 'rsa_pss_saltlen:32', '-pkeyopt', 'digest:sha256', '-in', digest, '-sigfile', sig]);
}

describe('openssl verifies our signature blocks', () => {
  it('signed by fleet image sign with an openssl key, each block verifies with openssl pkeyutl; a changed digest is refused', { timeout: 180_000 }, async () => {
    const k1 = opensslRsaKey(dir, 'k1.pem');
    const k2 = opensslRsaKey(dir, 'k2.pem');
    writeFileSync(at('app.bin'), appImage('2026.06.01', { bytes: 5000 }));
    const r = await runFleet(['image', 'sign', '--key', k1.key, '--key', k2.key, '-o', at('signed.bin'), at('app.bin')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);

    for (const [index, key] of [k1, k2].entries()) {
      const x = extract(at('signed.bin'), index, `b${index}`);
      expect(readFileSync(x.digest).equals(x.block.subarray(DIGEST_AT, DIGEST_AT + 32))).toBe(true);
      // The block's modulus and exponent are the key's, as openssl prints them (big-endian hex).
      const modulus = /^Modulus=([0-9A-F]+)$/m.exec(openssl(['rsa', '-pubin', '-in', key.pub, '-noout', '-modulus']).stdout)?.[1];
      expect(Buffer.from(x.block.subarray(N_AT, N_AT + RSA_BYTES)).reverse().toString('hex').toUpperCase()).toBe(modulus);
      expect(x.block.readUInt32LE(E_AT)).toBe(65537);

      const ok = pssVerify(key.pub, x.digest, x.sig);
      expect(ok.stdout).toMatch(/Signature Verified Successfully/);
      expect(ok.status).toBe(0);
      // The other key does not verify this block's signature.
      expect(pssVerify((index === 0 ? k2 : k1).pub, x.digest, x.sig).status).not.toBe(0);
    }

    // A changed digest (as of a changed image) is refused by openssl.
    const x = extract(at('signed.bin'), 0, 't');
    const digest = readFileSync(x.digest);
    digest[7] = digest[7]! ^ 0x40;
    writeFileSync(x.digest, digest);
    const bad = pssVerify(k1.pub, x.digest, x.sig);
    expect(bad.stdout).toMatch(/Signature Verification Failure/);
    expect(bad.status).not.toBe(0);
  });

  it("the same openssl check passes on Espressif's signed bootloaders (test/vectors/secure-boot), keys 1 to 3 in order", () => {
    const vectors = new URL('../vectors/secure-boot/', import.meta.url).pathname;
    const single = extract(join(vectors, 'bootloader_signed_v2_rsa.bin'), 0, 'e');
    expect(pssVerify(join(vectors, 'rsa_pubkey1.pem'), single.digest, single.sig).status).toBe(0);
    for (const index of [0, 1, 2]) {
      const x = extract(join(vectors, 'bootloader_multi_signed_v2_rsa.bin'), index, `m${index}`);
      expect(readFileSync(x.digest).equals(x.block.subarray(DIGEST_AT, DIGEST_AT + 32))).toBe(true);
      expect(pssVerify(join(vectors, `rsa_pubkey${index + 1}.pem`), x.digest, x.sig).status).toBe(0);
      expect(pssVerify(join(vectors, `rsa_pubkey${((index + 1) % 3) + 1}.pem`), x.digest, x.sig).status).not.toBe(0);
    }
  });
});
