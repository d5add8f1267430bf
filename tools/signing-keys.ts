// The PEM keys `fleet image sign | verify | key generate` read and write (docs/secure-boot.md): RSA-3072
// keys made with openssl (or by `fleet image key generate`), refused with a sentence naming the file
// when they cannot sign or verify a Secure Boot v2 image. Every refusal is a usage error (exit 2).
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { hex } from '../firmware/image/bytes.ts';
import { publicKeyDigest, RSA_KEY_BITS, SecureBootError } from '../firmware/image/secure-boot.ts';
import { readFileArgument } from '../cloud/file-errors.ts';
import { EXIT_CODES } from '../cloud/exit-codes.ts';

export class SigningKeyError extends Error {
  override name = 'SigningKeyError';
  readonly exitCode = EXIT_CODES.usage;
}

/** A key read from a file, with the digest SECURE_BOOT_DIGESTn would hold for it. */
export interface LoadedKey {
  path: string;
  key: KeyObject;
  /** 64 hex digits: `espsecure digest-sbv2-public-key`. */
  digest: string;
}

const isPublicPem = (text: string) => /-----BEGIN (RSA )?PUBLIC KEY-----/.test(text) && !/PRIVATE KEY-----/.test(text);
const isEncryptedPem = (text: string) => text.includes('-----BEGIN ENCRYPTED PRIVATE KEY-----') || /Proc-Type: 4,ENCRYPTED/.test(text);

/**
 * Where a key file was named, for the sentences that refuse it: each command that reads keys
 * (`fleet image`, `fleet virtual`, `fleet efuse burn-key`, `fleet firmware signing`) has its own flags.
 */
export interface KeyFileContext {
  /** What the file is, for a file that cannot be read (`readFileArgument`). */
  what?: string;
  /** How the messages name the file: the flag and the path (`--secure-boot-key k.pem`); the path by default. */
  name?: string;
  /** What to do with an encrypted key given without a passphrase. */
  encrypted?: string;
  /** Why a public key will not do, where a private key is needed. */
  publicKey?: string;
}

const PASSPHRASE_HINT = 'give its passphrase with --passphrase-file <file>';

/** The digest, or the library's refusal (not RSA, not 3072 bits) as a sentence that names the file. */
function withDigest(path: string, name: string, key: KeyObject): LoadedKey {
  try {
    return { path, key, digest: hex(publicKeyDigest(key)) };
  } catch (err) {
    if (err instanceof SecureBootError) throw new SigningKeyError(`${name}: ${err.message}`);
    throw err;
  }
}

/** A PEM private key to sign with: refuses a public key, an encrypted key without its passphrase, a key that is not RSA-3072. */
export function loadSigningKey(path: string, passphrase?: string, at: KeyFileContext = {}): LoadedKey {
  const name = at.name ?? path;
  const text = readFileArgument(path, at.what ?? 'the signing key').toString('latin1');
  if (isPublicPem(text)) throw new SigningKeyError(`${name} is a public key: ${at.publicKey ?? 'signing needs the private key (a PEM with "BEGIN PRIVATE KEY"); a public key is for fleet image verify --pub'}`);
  if (isEncryptedPem(text) && passphrase === undefined) throw new SigningKeyError(`${name} is encrypted: ${at.encrypted ?? PASSPHRASE_HINT}`);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem', ...(passphrase === undefined ? {} : { passphrase }) });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_OSSL_BAD_DECRYPT') throw new SigningKeyError(`${name}: the passphrase does not decrypt this key`);
    throw new SigningKeyError(`${name} is not a PEM private key (make one with: openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:3072 -out key.pem)`);
  }
  return withDigest(path, name, key);
}

/** A key to verify with, or to take the digest of: a public PEM, or a private one whose public half is taken. */
export function loadVerifyingKey(path: string, passphrase?: string, at: KeyFileContext = {}): LoadedKey {
  const name = at.name ?? path;
  const text = readFileArgument(path, at.what ?? 'the key').toString('latin1');
  if (isEncryptedPem(text) && passphrase === undefined) throw new SigningKeyError(`${name} is encrypted: ${at.encrypted ?? `${PASSPHRASE_HINT}, or verify with its public key (--pub)`}`);
  let key: KeyObject;
  try {
    key = isPublicPem(text) ? createPublicKey({ key: text, format: 'pem' }) : createPublicKey(createPrivateKey({ key: text, format: 'pem', ...(passphrase === undefined ? {} : { passphrase }) }));
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_OSSL_BAD_DECRYPT') throw new SigningKeyError(`${name}: the passphrase does not decrypt this key`);
    throw new SigningKeyError(`${name} is not a PEM key (a public key: openssl pkey -in key.pem -pubout -out pub.pem)`);
  }
  return withDigest(path, name, key);
}

/** The first line of a passphrase file (its line end dropped), as openssl's `-passin file:`. */
export function readPassphrase(path: string): string {
  const text = readFileArgument(path, 'the passphrase file').toString('utf8');
  const line = text.split(/\r?\n/, 1)[0]!;
  if (line.length === 0) throw new SigningKeyError(`${path}: the passphrase file is empty`);
  return line;
}

/**
 * Writes `path` whole or not at all, created fresh with `mode` (the umask cannot widen it): a temporary
 * file beside it, synced, then renamed over it, so a full disk or a crash never leaves a key, or a
 * signed image written over its input, cut short, and --force never keeps the old file's wider mode.
 */
export function writeNewFile(path: string, data: string | Uint8Array, mode: number): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  let fd: number;
  try {
    fd = openSync(temp, 'wx', mode);
  } catch (err) {
    // Name the file the user asked for, not the temporary one.
    if (err instanceof Error && 'path' in err) err.path = path;
    throw err;
  }
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

export interface GeneratedKey {
  digest: string;
  publicPem: string;
}

/**
 * A new RSA-3072 signing key (exponent 65537, PKCS#8 PEM) written 0600 to `path`, and its public key
 * to `pubPath` when given. Refuses to overwrite either file unless `force`: a signing key may be the
 * only copy of the key whose digest a fleet's chips have burned.
 */
export function generateSigningKey(path: string, o: { pubPath?: string; force?: boolean } = {}): GeneratedKey {
  if (o.pubPath !== undefined && join(o.pubPath) === join(path)) throw new SigningKeyError('the private key and the public key cannot be written to the same file');
  for (const p of [path, o.pubPath]) {
    if (p !== undefined && existsSync(p) && !o.force) {
      throw new SigningKeyError(`${p} already exists: a key is never overwritten (it may be the only copy of a key a chip trusts); choose another path, or add --force`);
    }
  }
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: RSA_KEY_BITS, publicExponent: 0x10001 });
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  writeNewFile(path, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 0o600);
  if (o.pubPath !== undefined) writeNewFile(o.pubPath, publicPem, 0o644);
  return { digest: hex(publicKeyDigest(publicKey)), publicPem };
}
