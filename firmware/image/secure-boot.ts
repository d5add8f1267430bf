// ESP-IDF Secure Boot v2 with RSA-3072-PSS, the only scheme the ESP32-S3 has (docs/secure-boot.md).
// Espressif's published format (ESP-IDF "Secure Boot V2", "Signature Block Format"):
//
//   an image padded with 0xFF to a 4 KB boundary, then one 4 KB signature sector holding up to three
//   1216-byte signature blocks one after the other, the rest of the sector erased (0xFF).
//
//   block:    0 magic 0xE7        1 version 0x02 (RSA)      2 two zero bytes
//             4 SHA-256 of the image (everything before the signature sector), 32 bytes
//            36 RSA modulus n, 384 bytes little-endian      420 exponent e, u32
//           424 R^2 mod n (R = 2^3072), 384 bytes LE       808 M' = -n^-1 mod 2^32, u32
//           812 RSA-PSS signature (SHA-256, MGF1-SHA-256, salt 32), 384 bytes little-endian
//          1196 CRC32 of bytes 0..1195 (the ROM's crc32_le, as zlib's)   1200 16 zero bytes
//
// The key digest burned in eFuse (SECURE_BOOT_DIGESTn) is the SHA-256 of bytes 36..811: n, e, R^2 mod
// n and M'. Host side (Node crypto): used by `fleet image sign|verify`, the cloud's release check and
// the virtual chip's boot stage; the firmware asks its chip (the ROM's verifier) instead.
import { createHash, createPublicKey, sign as rsaSign, verify as rsaVerify, constants, type KeyObject } from 'node:crypto';
import { hex, u32, putU32 } from './bytes.ts';
import { romCrc32Le } from './otadata.ts';

export const SIG_BLOCK_MAGIC = 0xe7;
export const SIG_BLOCK_VERSION_RSA = 0x02;
export const SIG_BLOCK_VERSION_ECDSA = 0x03;
export const SIG_BLOCK_BYTES = 1216;
export const SIG_SECTOR_BYTES = 4096;
export const MAX_SIG_BLOCKS = 3;
export const RSA_KEY_BITS = 3072;
const RSA_BYTES = RSA_KEY_BITS / 8;
/** Bytes of a block covered by its CRC. */
const CRC_SPAN = 1196;
/** Where the key material (what the eFuse digest covers) sits in a block, and its length. */
const KEY_AT = 36;
const KEY_BYTES = RSA_BYTES + 4 + RSA_BYTES + 4;
const SIG_AT = KEY_AT + KEY_BYTES;
const PSS = { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } as const;

export class SecureBootError extends Error {
  override name = 'SecureBootError';
}

function leBytes(value: bigint, length: number): Buffer {
  const out = Buffer.alloc(length);
  let v = value;
  for (let i = 0; i < length; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  if (v !== 0n) throw new SecureBootError(`a ${length}-byte field cannot hold this number`);
  return out;
}

function leNumber(bytes: Uint8Array): bigint {
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]!);
  return v;
}

function base64urlNumber(b64: string): bigint {
  return leNumber(Buffer.from(b64, 'base64url').reverse());
}

/** R^2 mod n and M' as the chip's RSA peripheral wants them (Montgomery form, 32-bit words). */
export function montgomeryValues(n: bigint): { rinv: bigint; mPrime: number } {
  if ((n & 1n) === 0n) throw new SecureBootError('an RSA modulus is odd');
  let inv = n & 0xffffffffn;
  for (let i = 0; i < 5; i++) inv = (inv * (2n - ((n * inv) & 0xffffffffn))) & 0xffffffffn;
  return { rinv: (1n << BigInt(2 * RSA_KEY_BITS)) % n, mPrime: Number((0x100000000n - inv) & 0xffffffffn) };
}

/** An RSA-3072 public key (from a private or public KeyObject), refusing anything else with why. */
export function rsaPublicKeyOf(key: KeyObject): KeyObject {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  if (pub.asymmetricKeyType !== 'rsa') {
    throw new SecureBootError(`the ESP32-S3 verifies Secure Boot v2 with RSA-3072 only; this is a${pub.asymmetricKeyType === 'ec' ? 'n EC' : ` ${pub.asymmetricKeyType ?? 'symmetric'}`} key`);
  }
  const bits = pub.asymmetricKeyDetails?.modulusLength;
  if (bits !== RSA_KEY_BITS) throw new SecureBootError(`Secure Boot v2 RSA keys are ${RSA_KEY_BITS} bits; this one is ${bits}`);
  return pub;
}

/** The 776 bytes of key material a block carries and the eFuse digest covers: n, e, R^2 mod n, M'. */
export function keyMaterial(key: KeyObject): Buffer {
  const jwk = rsaPublicKeyOf(key).export({ format: 'jwk' });
  const n = base64urlNumber(jwk.n!);
  const e = base64urlNumber(jwk.e!);
  if (e > 0xffffffffn) throw new SecureBootError('the RSA exponent does not fit the block (32 bits)');
  const { rinv, mPrime } = montgomeryValues(n);
  const out = Buffer.alloc(KEY_BYTES);
  leBytes(n, RSA_BYTES).copy(out, 0);
  out.writeUInt32LE(Number(e), RSA_BYTES);
  leBytes(rinv, RSA_BYTES).copy(out, RSA_BYTES + 4);
  out.writeUInt32LE(mPrime, 2 * RSA_BYTES + 4);
  return out;
}

/** The SHA-256 digest of a public key as SECURE_BOOT_DIGESTn holds it (`espsecure digest-sbv2-public-key`). */
export function publicKeyDigest(key: KeyObject): Buffer {
  return createHash('sha256').update(keyMaterial(key)).digest();
}

/** Pads an image with 0xFF to the next 4 KB boundary: the signature sector starts on its own sector. */
export function padToSector(image: Uint8Array): Buffer {
  const length = Math.ceil(image.length / SIG_SECTOR_BYTES) * SIG_SECTOR_BYTES;
  const out = Buffer.alloc(length, 0xff);
  out.set(image, 0);
  return out;
}

/** One signature block for `content` (already sector-padded), signed with an RSA-3072 private key. */
export function signatureBlock(content: Uint8Array, privateKey: KeyObject): Buffer {
  if (privateKey.type !== 'private') throw new SecureBootError('signing needs the private key (a PEM with "PRIVATE KEY")');
  const material = keyMaterial(privateKey);
  const digest = createHash('sha256').update(content).digest();
  const signature = rsaSign('sha256', content, { key: privateKey, ...PSS });
  const block = Buffer.alloc(SIG_BLOCK_BYTES, 0);
  block[0] = SIG_BLOCK_MAGIC;
  block[1] = SIG_BLOCK_VERSION_RSA;
  digest.copy(block, 4);
  material.copy(block, KEY_AT);
  Buffer.from(signature).reverse().copy(block, SIG_AT);
  putU32(block, CRC_SPAN, romCrc32Le(0, block.subarray(0, CRC_SPAN)));
  return block;
}

export interface SignOptions {
  /** Keep the valid signature blocks already in the image's signature sector and add after them. */
  append?: boolean;
}

/**
 * Signs an app (or bootloader) image: pads it to 4 KB and appends a signature sector with one block per
 * key, as `espsecure sign-data -v 2 [-a]` does. With `append`, an image that already ends in a
 * signature sector keeps its valid blocks; at most three blocks in all.
 */
export function signImage(image: Uint8Array, privateKeys: KeyObject[], o: SignOptions = {}): Buffer {
  if (privateKeys.length === 0) throw new SecureBootError('no signing key given');
  let content: Uint8Array = image;
  const kept: Buffer[] = [];
  if (o.append) {
    const sector = readSignatureSector(image);
    if (sector) {
      for (const b of sector.blocks) if (b.problem === undefined) kept.push(Buffer.from(b.raw));
      if (kept.length > 0) content = image.subarray(0, sector.contentLength);
    }
  }
  if (kept.length + privateKeys.length > MAX_SIG_BLOCKS) {
    throw new SecureBootError(`a signature sector holds ${MAX_SIG_BLOCKS} blocks: ${kept.length} already signed, ${privateKeys.length} more asked`);
  }
  const padded = padToSector(content);
  const blocks = [...kept, ...privateKeys.map((k) => signatureBlock(padded, k))];
  const sector = Buffer.alloc(SIG_SECTOR_BYTES, 0xff);
  blocks.forEach((b, i) => b.copy(sector, i * SIG_BLOCK_BYTES));
  return Buffer.concat([padded, sector]);
}

export interface ParsedBlock {
  index: number;
  raw: Uint8Array;
  version: number;
  /** The image digest the block was signed over. */
  imageDigest: string;
  /** SHA-256 of the block's key material: what SECURE_BOOT_DIGESTn must hold for it to count. */
  keyDigest: string;
  /** Why the chip would not use this block (damaged, not RSA, precomputed values wrong); undefined when sound. */
  problem?: string;
}

export interface SignatureSector {
  /** Bytes before the sector: what the blocks' digests cover. */
  contentLength: number;
  /** The blocks present (an erased slot ends the list). */
  blocks: ParsedBlock[];
}

function parseBlock(raw: Uint8Array, index: number): ParsedBlock | null {
  if (raw.every((b) => b === 0xff)) return null;
  const block: ParsedBlock = {
    index,
    raw,
    version: raw[1]!,
    imageDigest: hex(raw.subarray(4, 36)),
    keyDigest: hex(createHash('sha256').update(raw.subarray(KEY_AT, KEY_AT + KEY_BYTES)).digest()),
  };
  const crc = romCrc32Le(0, raw.subarray(0, CRC_SPAN));
  if (raw[0] !== SIG_BLOCK_MAGIC) block.problem = `signature block ${index} has magic 0x${raw[0]!.toString(16).padStart(2, '0')}, not 0xe7: damaged`;
  else if (u32(raw, CRC_SPAN) !== crc) block.problem = `signature block ${index} is damaged: CRC32 0x${u32(raw, CRC_SPAN).toString(16).padStart(8, '0')} stored, 0x${crc.toString(16).padStart(8, '0')} calculated`;
  else if (raw[1] === SIG_BLOCK_VERSION_ECDSA) block.problem = `signature block ${index} is ECDSA: the ESP32-S3 verifies RSA-3072 only`;
  else if (raw[1] !== SIG_BLOCK_VERSION_RSA) block.problem = `signature block ${index} has version ${raw[1]}, not 2 (RSA)`;
  else {
    const n = leNumber(raw.subarray(KEY_AT, KEY_AT + RSA_BYTES));
    const { rinv, mPrime } = (n & 1n) === 1n ? montgomeryValues(n) : { rinv: -1n, mPrime: -1 };
    if (leNumber(raw.subarray(KEY_AT + RSA_BYTES + 4, KEY_AT + 2 * RSA_BYTES + 4)) !== rinv || u32(raw, KEY_AT + 2 * RSA_BYTES + 4) !== mPrime) {
      block.problem = `signature block ${index}: its precomputed R^2 mod n and M' do not belong to its modulus (damaged)`;
    }
  }
  return block;
}

/**
 * The signature sector of a signed image held whole (a file): the last 4 KB, when the length is a
 * multiple of 4 KB and the sector starts with a block. Null when there is none.
 */
export function readSignatureSector(image: Uint8Array, contentLength = image.length - SIG_SECTOR_BYTES): SignatureSector | null {
  if (contentLength < 0 || contentLength % SIG_SECTOR_BYTES !== 0 || image.length < contentLength + SIG_SECTOR_BYTES) return null;
  const sector = image.subarray(contentLength, contentLength + SIG_SECTOR_BYTES);
  // No magic where the first block starts: no sector (an unsigned image that happens to end on 4 KB
  // holds code there), as espsecure's validate_signature_block finds no block.
  if (sector[0] !== SIG_BLOCK_MAGIC) return null;
  const blocks: ParsedBlock[] = [];
  for (let i = 0; i < MAX_SIG_BLOCKS; i++) {
    const parsed = parseBlock(sector.subarray(i * SIG_BLOCK_BYTES, (i + 1) * SIG_BLOCK_BYTES), i);
    if (!parsed) break;
    blocks.push(parsed);
  }
  return blocks.length > 0 ? { contentLength, blocks } : null;
}

/** A key the verifier trusts: an eFuse digest slot (SECURE_BOOT_DIGEST0..2), or a key given by hand. */
export interface TrustedKey {
  /** The key digest, 64 hex digits. */
  digest: string;
  /** Which SECURE_BOOT_DIGESTn slot holds it (undefined for a key given on the command line). */
  slot?: number;
  revoked?: boolean;
}

export type VerifyFailure = 'unsigned' | 'damaged' | 'tampered' | 'untrusted' | 'revoked' | 'bad_signature';

export interface SecureBootVerdict {
  ok: boolean;
  /** SHA-256 of the content before the signature sector. */
  digest: string;
  /** The block that verified, and the trusted key it matched. */
  signedBy?: { block: number; keyDigest: string; slot?: number };
  blocks: ParsedBlock[];
  /** Why it failed (first the most telling cause), worded for a log line. */
  failure?: { kind: VerifyFailure; message: string };
}

function publicKeyOfBlock(raw: Uint8Array): KeyObject {
  const n = Buffer.from(raw.subarray(KEY_AT, KEY_AT + RSA_BYTES)).reverse();
  const e = Buffer.from(raw.subarray(KEY_AT + RSA_BYTES, KEY_AT + RSA_BYTES + 4)).reverse();
  let start = 0;
  while (start < e.length - 1 && e[start] === 0) start++;
  return createPublicKey({ key: { kty: 'RSA', n: n.toString('base64url'), e: e.subarray(start).toString('base64url') }, format: 'jwk' });
}

/**
 * Verifies a signed image as the ROM and ESP-IDF's bootloader do (esp_secure_boot_verify_sbv2_signature_block):
 * a block counts when it is sound, its image digest matches the content, its key digest is a
 * trusted one not revoked, and its RSA-PSS signature verifies. `read(offset, length)` reads the image
 * (a file or a flash partition); `contentLength` is where its signature sector starts.
 */
export function verifySignedImage(read: (offset: number, length: number) => Uint8Array, contentLength: number, trusted: readonly TrustedKey[]): SecureBootVerdict {
  const content = read(0, contentLength);
  const digest = hex(createHash('sha256').update(content).digest());
  const sector = content.length === contentLength ? readSignatureSector(read(contentLength, SIG_SECTOR_BYTES), 0) : null;
  const verdict: SecureBootVerdict = { ok: false, digest, blocks: sector?.blocks ?? [] };
  if (!sector) {
    verdict.failure = { kind: 'unsigned', message: `no signature sector at offset 0x${contentLength.toString(16)}: the image is not signed` };
    return verdict;
  }
  const reasons: Array<{ kind: VerifyFailure; message: string }> = [];
  for (const b of sector.blocks) {
    if (b.problem) {
      reasons.push({ kind: 'damaged', message: b.problem });
      continue;
    }
    if (b.imageDigest !== digest) {
      reasons.push({ kind: 'tampered', message: `signature block ${b.index}: the image digest ${digest} is not the signed ${b.imageDigest}: the image changed after signing` });
      continue;
    }
    const key = trusted.find((t) => t.digest.toLowerCase() === b.keyDigest);
    if (!key) {
      reasons.push({ kind: 'untrusted', message: `signature block ${b.index} is signed by key ${b.keyDigest}, which is not a trusted key` });
      continue;
    }
    if (key.revoked) {
      reasons.push({ kind: 'revoked', message: `signature block ${b.index} is signed by key ${b.keyDigest}${key.slot === undefined ? '' : ` (SECURE_BOOT_DIGEST${key.slot})`}, which is revoked` });
      continue;
    }
    const signature = Buffer.from(b.raw.subarray(SIG_AT, SIG_AT + RSA_BYTES)).reverse();
    if (!rsaVerify('sha256', content, { key: publicKeyOfBlock(b.raw), ...PSS }, signature)) {
      reasons.push({ kind: 'bad_signature', message: `signature block ${b.index}: the RSA-PSS signature does not verify with its key` });
      continue;
    }
    verdict.ok = true;
    verdict.signedBy = { block: b.index, keyDigest: b.keyDigest, ...(key.slot === undefined ? {} : { slot: key.slot }) };
    return verdict;
  }
  // The most telling cause: a changed image before a damaged block before an unknown key.
  const rank: VerifyFailure[] = ['tampered', 'bad_signature', 'revoked', 'damaged', 'untrusted', 'unsigned'];
  reasons.sort((a, b) => rank.indexOf(a.kind) - rank.indexOf(b.kind));
  verdict.failure = reasons[0] ?? { kind: 'unsigned', message: 'the signature sector holds no block' };
  return verdict;
}

/** verifySignedImage over a signed image in memory (a file: the signature sector is its last 4 KB). */
export function verifySignedImageBytes(image: Uint8Array, trusted: readonly TrustedKey[]): SecureBootVerdict {
  if (image.length < SIG_SECTOR_BYTES || image.length % SIG_SECTOR_BYTES !== 0) {
    return {
      ok: false,
      digest: hex(createHash('sha256').update(image).digest()),
      blocks: [],
      failure: { kind: 'unsigned', message: `the image is ${image.length} bytes, not a multiple of 4096: it carries no signature sector` },
    };
  }
  return verifySignedImage((offset, length) => image.subarray(offset, offset + length), image.length - SIG_SECTOR_BYTES, trusted);
}

/** Where a signed app's signature sector sits in flash: after the image (its verified length), on the next 4 KB boundary. */
export function signatureSectorOffset(imageLength: number): number {
  return Math.ceil(imageLength / SIG_SECTOR_BYTES) * SIG_SECTOR_BYTES;
}
