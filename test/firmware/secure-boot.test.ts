// Secure Boot v2 signature blocks (firmware/image/secure-boot.ts) against Espressif's own: the signed
// bootloaders and public keys of esptool's test suite (test/vectors/secure-boot/README.md says where
// they come from). Our key digest is espsecure's, Espressif's blocks verify with their keys in order,
// and a block we make for the same content is Espressif's byte for byte but for the (randomized) PSS
// signature and the CRC over it. Then what the verifier refuses, and why.
import { createHash, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { putU32, u32 } from '../../firmware/image/bytes.ts';
import { romCrc32Le } from '../../firmware/image/otadata.ts';
import {
  keyMaterial,
  MAX_SIG_BLOCKS,
  publicKeyDigest,
  readSignatureSector,
  SecureBootError,
  SIG_BLOCK_BYTES,
  SIG_SECTOR_BYTES,
  signatureBlock,
  signImage,
  verifySignedImageBytes,
  type TrustedKey,
} from '../../firmware/image/secure-boot.ts';
import { describeSignatures } from '../../firmware/image/describe.ts';

const vector = (name: string) => readFileSync(new URL(`../vectors/secure-boot/${name}`, import.meta.url));
const pubKey = (i: 1 | 2 | 3) => createPublicKey(vector(`rsa_pubkey${i}.pem`));
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

// The block's fields (Espressif, "Signature Block Format"): what the CRC covers ends at 1196.
const KEY_AT = 36;
const SIG_AT = 812;
const CRC_AT = 1196;

/** The README's expected values, which it took from esptool's test suite. */
const DIGESTS = {
  1: 'cb2791a371b0c0322bf7370478ba0962224cab1cf2287879e429673e7da84463',
  2: '901a7409238d52d4cbf96f563fb3f4296dabd66a33f53b15eecd8cb3e7ec45d3',
  3: '27919392d68bab79286a26759143a5b1d599efcebd754e5703b5dd23b5e3dd3b',
} as const;
const CONTENT_BYTES = 32768;
const CONTENT_SHA256 = '41e8df85bcf9632d97f97d3716e09e403c4acece1ccc25749241be2b6ddd21de';

const rsaKey = (bits = 3072): KeyObject => generateKeyPairSync('rsa', { modulusLength: bits }).privateKey;
const ourKey = rsaKey();

describe("Espressif's signed images and keys", () => {
  it('our key digest is espsecure digest-sbv2-public-key (rsa_public_key_digest.bin), and the README\'s for keys 2 and 3', () => {
    expect(publicKeyDigest(pubKey(1)).equals(vector('rsa_public_key_digest.bin'))).toBe(true);
    expect(publicKeyDigest(pubKey(1)).toString('hex')).toBe(DIGESTS[1]);
    expect(publicKeyDigest(pubKey(2)).toString('hex')).toBe(DIGESTS[2]);
    expect(publicKeyDigest(pubKey(3)).toString('hex')).toBe(DIGESTS[3]);
  });

  it('reads the single-signed bootloader: one block over its first 32768 bytes, whose digest is the content\'s, verifying with key 1 only', () => {
    const image = vector('bootloader_signed_v2_rsa.bin');
    expect(image.length).toBe(CONTENT_BYTES + SIG_SECTOR_BYTES);
    expect(sha256(image.subarray(0, CONTENT_BYTES))).toBe(CONTENT_SHA256);
    const sector = readSignatureSector(image)!;
    expect(sector.contentLength).toBe(CONTENT_BYTES);
    expect(sector.blocks.map((b) => ({ index: b.index, version: b.version, imageDigest: b.imageDigest, keyDigest: b.keyDigest, problem: b.problem }))).toEqual([
      { index: 0, version: 2, imageDigest: CONTENT_SHA256, keyDigest: DIGESTS[1], problem: undefined },
    ]);
    // The CRC32 Espressif stored is the ROM's crc32_le of the block's first 1196 bytes.
    const block = image.subarray(CONTENT_BYTES, CONTENT_BYTES + SIG_BLOCK_BYTES);
    expect(u32(block, CRC_AT)).toBe(romCrc32Le(0, block.subarray(0, CRC_AT)));
    const good = verifySignedImageBytes(image, [{ digest: DIGESTS[1] }]);
    expect(good).toMatchObject({ ok: true, digest: CONTENT_SHA256, signedBy: { block: 0, keyDigest: DIGESTS[1] } });
    const other = verifySignedImageBytes(image, [{ digest: DIGESTS[2] }]);
    expect(other.ok).toBe(false);
    expect(other.failure?.kind).toBe('untrusted');
  });

  it('reads the multi-signed bootloader: its three blocks verify with keys 1, 2 and 3, in that order', () => {
    const image = vector('bootloader_multi_signed_v2_rsa.bin');
    const sector = readSignatureSector(image)!;
    expect(sector.contentLength).toBe(CONTENT_BYTES);
    expect(sector.blocks.map((b) => b.keyDigest)).toEqual([DIGESTS[1], DIGESTS[2], DIGESTS[3]]);
    expect(sector.blocks.every((b) => b.problem === undefined && b.imageDigest === CONTENT_SHA256)).toBe(true);
    for (const [i, digest] of [DIGESTS[1], DIGESTS[2], DIGESTS[3]].entries()) {
      const verdict = verifySignedImageBytes(image, [{ digest }]);
      expect(verdict.ok).toBe(true);
      expect(verdict.signedBy).toEqual({ block: i, keyDigest: digest });
    }
    // The rest of the sector is erased, as espsecure leaves it.
    expect(image.subarray(CONTENT_BYTES + MAX_SIG_BLOCKS * SIG_BLOCK_BYTES).every((b) => b === 0xff)).toBe(true);
    expect(describeSignatures(image)?.blocks.map((b) => b.state)).toEqual(['sound', 'sound', 'sound']);
  });

  it("makes Espressif's block for the same content: the same bytes but for the PSS signature and the CRC", () => {
    const theirs = vector('bootloader_signed_v2_rsa.bin');
    const content = theirs.subarray(0, CONTENT_BYTES);
    const their = theirs.subarray(CONTENT_BYTES, CONTENT_BYTES + SIG_BLOCK_BYTES);
    // keyMaterial is what our block carries for a key: for Espressif's key 1 it is their n, e, R^2 mod n and M'.
    expect(keyMaterial(pubKey(1)).equals(their.subarray(KEY_AT, SIG_AT))).toBe(true);
    // Our block for this content with our own key; with their key's material in place (their private
    // key is not published here) everything but the signature and the CRC is theirs.
    const ours = Buffer.from(signatureBlock(content, ourKey));
    keyMaterial(pubKey(1)).copy(ours, KEY_AT);
    const differing = [...ours.keys()].filter((i) => ours[i] !== their[i]);
    expect(differing.length).toBeGreaterThan(300);
    expect(differing.every((i) => (i >= SIG_AT && i < CRC_AT + 4))).toBe(true);
    // Their signature in, our CRC over it: byte for byte their block (our CRC is theirs too).
    their.copy(ours, SIG_AT, SIG_AT, CRC_AT);
    putU32(ours, CRC_AT, romCrc32Le(0, ours.subarray(0, CRC_AT)));
    expect(ours.equals(their)).toBe(true);
    // signImage lays the file out as espsecure does: content (already 4 KB aligned), block, 0xFF.
    const signed = signImage(content, [ourKey]);
    expect(signed.length).toBe(theirs.length);
    expect(signed.subarray(0, CONTENT_BYTES).equals(content)).toBe(true);
    expect(signed.subarray(CONTENT_BYTES + SIG_BLOCK_BYTES).equals(theirs.subarray(CONTENT_BYTES + SIG_BLOCK_BYTES))).toBe(true);
  });

  it('signs with a random PSS salt: two signatures of the same content differ, and both verify', () => {
    const content = vector('bootloader_signed_v2_rsa.bin').subarray(0, CONTENT_BYTES);
    const a = signImage(content, [ourKey]);
    const b = signImage(content, [ourKey]);
    expect(a.subarray(CONTENT_BYTES + SIG_AT, CONTENT_BYTES + CRC_AT).equals(b.subarray(CONTENT_BYTES + SIG_AT, CONTENT_BYTES + CRC_AT))).toBe(false);
    const digest = publicKeyDigest(ourKey).toString('hex');
    expect(verifySignedImageBytes(a, [{ digest }]).ok).toBe(true);
    expect(verifySignedImageBytes(b, [{ digest }]).ok).toBe(true);
  });
});

describe('what the verifier refuses', () => {
  const image = Buffer.from('an image of 3000 bytes, padded to 4 KB when signed '.repeat(60).slice(0, 3000));
  const digest = publicKeyDigest(ourKey).toString('hex');
  const signed = signImage(image, [ourKey]);
  const withByte = (at: number, xor = 0x01) => {
    const copy = Buffer.from(signed);
    copy[at] = copy[at]! ^ xor;
    return copy;
  };
  const failure = (bytes: Uint8Array, trusted: TrustedKey[] = [{ digest }]) => verifySignedImageBytes(bytes, trusted).failure?.kind;

  it('pads to the next 4 KB with 0xFF and verifies with the key, naming block 0', () => {
    expect(signed.length).toBe(2 * SIG_SECTOR_BYTES);
    expect(signed.subarray(0, image.length).equals(image)).toBe(true);
    expect(signed.subarray(image.length, SIG_SECTOR_BYTES).every((b) => b === 0xff)).toBe(true);
    expect(verifySignedImageBytes(signed, [{ digest }])).toMatchObject({ ok: true, signedBy: { block: 0, keyDigest: digest } });
  });

  it('a changed byte of the image: tampered', () => {
    expect(failure(withByte(100))).toBe('tampered');
    expect(failure(withByte(SIG_SECTOR_BYTES - 1))).toBe('tampered'); // in the padding, which is signed too
  });

  it('a changed byte of a block: damaged (CRC, magic, or precomputed values that are not the modulus\'s)', () => {
    expect(failure(withByte(SIG_SECTOR_BYTES + 700))).toBe('damaged');
    // Block 0 without its magic is no sector at all (as espsecure and the bootloader see it); block 1's, damaged.
    expect(failure(withByte(SIG_SECTOR_BYTES, 0x10))).toBe('unsigned');
    const second = signImage(signed, [rsaKey()], { append: true });
    second[SIG_SECTOR_BYTES + SIG_BLOCK_BYTES] = 0xe6;
    expect(verifySignedImageBytes(second, [{ digest: 'f'.repeat(64) }]).blocks[1]?.problem).toBe('signature block 1 has magic 0xe6, not 0xe7: damaged');
    const rinv = withByte(SIG_SECTOR_BYTES + 500);
    putU32(rinv, SIG_SECTOR_BYTES + CRC_AT, romCrc32Le(0, rinv.subarray(SIG_SECTOR_BYTES, SIG_SECTOR_BYTES + CRC_AT)));
    expect(verifySignedImageBytes(rinv, [{ digest }]).failure?.message).toMatch(/precomputed R\^2 mod n and M' do not belong to its modulus/);
  });

  it('a changed signature with its CRC made good: bad_signature', () => {
    const forged = withByte(SIG_SECTOR_BYTES + SIG_AT + 10);
    putU32(forged, SIG_SECTOR_BYTES + CRC_AT, romCrc32Le(0, forged.subarray(SIG_SECTOR_BYTES, SIG_SECTOR_BYTES + CRC_AT)));
    expect(failure(forged)).toBe('bad_signature');
  });

  it('another key: untrusted; a revoked one: revoked; no sector: unsigned', () => {
    expect(failure(signed, [{ digest: DIGESTS[1] }])).toBe('untrusted');
    expect(failure(signed, [{ digest, slot: 1, revoked: true }])).toBe('revoked');
    expect(failure(image)).toBe('unsigned');
    // An unsigned image that ends on a 4 KB boundary: its last sector is code, not signature blocks.
    const aligned = signImage(image, [ourKey]).subarray(0, SIG_SECTOR_BYTES);
    expect(verifySignedImageBytes(aligned, [{ digest }]).failure).toEqual({ kind: 'unsigned', message: 'no signature sector at offset 0x0: the image is not signed' });
    expect(describeSignatures(aligned)).toBeNull();
  });

  it('appends up to three blocks, keeping the sound ones, and refuses a fourth', () => {
    const [k2, k3, k4] = [rsaKey(), rsaKey(), rsaKey()];
    const two = signImage(signed, [k2], { append: true });
    expect(two.length).toBe(signed.length);
    expect(readSignatureSector(two)!.blocks.map((b) => b.keyDigest)).toEqual([digest, publicKeyDigest(k2).toString('hex')]);
    const three = signImage(two, [k3], { append: true });
    expect(verifySignedImageBytes(three, [{ digest: publicKeyDigest(k3).toString('hex') }]).signedBy?.block).toBe(2);
    expect(() => signImage(three, [k4], { append: true })).toThrow(/a signature sector holds 3 blocks: 3 already signed, 1 more asked/);
    expect(() => signImage(image, [k2, k3, k4, ourKey])).toThrow(SecureBootError);
  });

  it('refuses keys the chip cannot use: RSA-2048, EC, a public key to sign with', () => {
    expect(() => signImage(image, [rsaKey(2048)])).toThrow(/Secure Boot v2 RSA keys are 3072 bits; this one is 2048/);
    expect(() => signImage(image, [generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey])).toThrow(/RSA-3072 only; this is an EC key/);
    expect(() => signImage(image, [createPublicKey(ourKey)])).toThrow(/signing needs the private key/);
  });
});
