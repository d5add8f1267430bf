// `fleet image sign | verify | key generate`: ESP-IDF Secure Boot v2 signatures (RSA-3072-PSS) on app
// and bootloader images, in Espressif's format (firmware/image/secure-boot.ts, docs/secure-boot.md).
//   fleet image sign --key k.pem [--key k2.pem …] [--append] -o signed.bin image.bin
//   fleet image verify (--key k.pem | --pub pub.pem) … image.bin [--json]
//   fleet image key generate -o k.pem [--pub pub.pem] [--force]
// Exit codes: 0 done; 1 verify refused the image (unsigned, changed after signing, signed by another
// key, a damaged block, a signature that does not verify); 2 usage: a bad or unreadable key or file,
// a refused signing (not RSA-3072, encrypted without its passphrase, a public key, over three blocks).
import type { Command } from 'commander';
import { describeSignatures } from '../../firmware/image/describe.ts';
import { MAX_SIG_BLOCKS, readSignatureSector, signImage, verifySignedImageBytes, type SecureBootVerdict } from '../../firmware/image/secure-boot.ts';
import { readFileArgument } from '../../cloud/file-errors.ts';
import { generateSigningKey, loadSigningKey, loadVerifyingKey, readPassphrase, writeNewFile, type LoadedKey } from '../signing-keys.ts';

export class ImageSigningError extends Error {
  override name = 'ImageSigningError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

const usage = (message: string) => new ImageSigningError(message, 2);
const collect = (value: string, previous: string[]) => [...previous, value];
const n = (v: number) => v.toLocaleString('en-US');

function readImage(path: string): Uint8Array {
  return new Uint8Array(readFileArgument(path, 'the image'));
}

/** Signs `file` with `keys`; refuses what would make an image the chip cannot use, before writing anything. */
function sign(file: string, keyPaths: string[], o: { output: string; append?: boolean; passphraseFile?: string }): string {
  if (keyPaths.length === 0) throw usage('give the signing key: --key k.pem (repeat --key to sign with up to three)');
  if (keyPaths.length > MAX_SIG_BLOCKS) throw usage(`a signature sector holds ${MAX_SIG_BLOCKS} blocks: ${keyPaths.length} keys given`);
  const image = readImage(file);
  const passphrase = o.passphraseFile === undefined ? undefined : readPassphrase(o.passphraseFile);
  const keys = keyPaths.map((p) => loadSigningKey(p, passphrase));
  const twice = keys.find((k, i) => keys.findIndex((other) => other.digest === k.digest) !== i);
  if (twice) throw usage(`${twice.path} is the same key as ${keys.find((k) => k.digest === twice.digest)!.path}: each block needs its own key`);

  const existing = describeSignatures(image);
  if (existing && !o.append) {
    throw usage(`${file} is already signed (${existing.blocks.length} signature block${existing.blocks.length === 1 ? '' : 's'}): add --append to sign it with another key too, or sign the unsigned image`);
  }
  const kept = existing?.blocks ?? [];
  for (const b of kept) {
    if (b.state !== 'sound') throw usage(`--append keeps the blocks ${file} has, but its signature block ${b.index} is ${b.state.replace('_', ' ')} (${b.problem}): sign the unsigned image afresh`);
    const same = keys.find((k) => k.digest === b.keyDigest);
    if (same) throw usage(`${file}'s signature block ${b.index} is already signed by ${same.path}`);
  }
  if (kept.length + keys.length > MAX_SIG_BLOCKS) {
    throw usage(`a signature sector holds ${MAX_SIG_BLOCKS} blocks: ${file} has ${kept.length}, and ${keys.length} more ${keys.length === 1 ? 'was' : 'were'} asked`);
  }

  const signed = signImage(image, keys.map((k) => k.key), { append: o.append === true });
  // Back-verify, as espsecure does: every block of the output is sound before it is written.
  const check = describeSignatures(signed);
  const unsound = check?.blocks.find((b) => b.state !== 'sound');
  if (!check || unsound || check.blocks.length !== kept.length + keys.length) throw new Error(`signing ${file} made a signature sector that does not verify${unsound ? ` (${unsound.problem})` : ''}`);
  writeNewFile(o.output, signed, 0o644);
  const lines = [`${o.output}: ${n(signed.length)} bytes, signed over the first ${n(check.contentLength)} (SHA-256 ${check.digest}), ${check.blocks.length} signature block${check.blocks.length === 1 ? '' : 's'}`];
  for (const b of check.blocks) {
    const key = b.index < kept.length ? 'kept from the image' : keys[b.index - kept.length]!.path;
    lines.push(`  signature block ${b.index}: key digest ${b.keyDigest} (${key})`);
  }
  return lines.join('\n') + '\n';
}

/** The failure as a sentence that says what is wrong with the image, naming the keys when the key is the problem. */
function failureMessage(file: string, verdict: SecureBootVerdict, keys: LoadedKey[]): string {
  const failure = verdict.failure!;
  switch (failure.kind) {
    case 'unsigned':
      return `${file} is not signed: ${failure.message}`;
    case 'tampered':
      return `${file} was changed after it was signed: ${failure.message}`;
    case 'untrusted': {
      const signers = verdict.blocks.map((b) => `${b.keyDigest} (block ${b.index})`).join(', ');
      const given = keys.map((k) => `${k.digest} (${k.path})`).join(', ');
      return `${file} is signed by another key: its blocks carry key digest${verdict.blocks.length === 1 ? '' : 's'} ${signers}; the key${keys.length === 1 ? '' : 's'} given: ${given}`;
    }
    case 'damaged':
      return `${file} has a damaged signature block: ${failure.message}`;
    case 'bad_signature':
      return `${file}'s signature does not verify: ${failure.message}`;
    case 'revoked':
      return `${file}: ${failure.message}`;
  }
}

function verify(file: string, o: { key: string[]; pub: string[]; passphraseFile?: string; json?: boolean }, setExit: (code: number) => void): void {
  if (o.key.length + o.pub.length === 0) throw usage('give the key to trust: --key k.pem or --pub pub.pem');
  const image = readImage(file);
  const passphrase = o.passphraseFile === undefined ? undefined : readPassphrase(o.passphraseFile);
  const keys = [...o.key, ...o.pub].map((p) => loadVerifyingKey(p, passphrase));
  const verdict = verifySignedImageBytes(image, keys.map((k) => ({ digest: k.digest })));
  const signer = verdict.signedBy && keys.find((k) => k.digest === verdict.signedBy!.keyDigest);
  const sector = readSignatureSector(image);
  if (o.json) {
    process.stdout.write(
      JSON.stringify(
        {
          file,
          ok: verdict.ok,
          digest: verdict.digest,
          contentLength: sector?.contentLength ?? image.length,
          signedBy: verdict.signedBy ? { block: verdict.signedBy.block, keyDigest: verdict.signedBy.keyDigest, key: signer?.path } : null,
          blocks: describeSignatures(image)?.blocks ?? [],
          failure: verdict.failure ?? null,
        },
        null,
        2,
      ) + '\n',
    );
  } else if (verdict.ok) {
    const s = verdict.signedBy!;
    process.stdout.write(
      `${file}: verified, signed in key slot ${s.block} (signature block ${s.block} of ${verdict.blocks.length}) by ${signer!.path}\n` +
        `  image digest: ${verdict.digest} (SHA-256 of the first ${n(sector!.contentLength)} bytes)\n` +
        `  key digest:   ${s.keyDigest}\n`,
    );
  }
  if (!verdict.ok) {
    process.stderr.write(`fleet: ${failureMessage(file, verdict, keys)}\n`);
    setExit(1);
  }
}

export function imageSigningCommands(image: Command, setExit: (code: number) => void): void {
  image
    .command('sign')
    .description('Sign an image for Secure Boot v2 (RSA-3072-PSS): pad it to 4 KB and append a signature sector with one block per key, as espsecure sign-data -v 2')
    .argument('<image>')
    .option('--key <pem>', 'an RSA-3072 private key (PEM); repeat for up to three blocks', collect, [])
    .requiredOption('-o, --output <file>', 'where to write the signed image')
    .option('--append', 'keep the signature blocks the image has and add after them (key rotation)')
    .option('--passphrase-file <file>', 'the passphrase of encrypted keys, on the first line of this file')
    .action((file: string, o: { key: string[]; output: string; append?: boolean; passphraseFile?: string }) => {
      process.stdout.write(sign(file, o.key, o));
    });

  image
    .command('verify')
    .description('Verify a signed image as the chip would with these keys\' digests burned; exit 1 if it is unsigned, changed, signed by another key or damaged')
    .argument('<image>')
    .option('--key <pem>', 'trust this private key (its public half); repeatable', collect, [])
    .option('--pub <pem>', 'trust this public key (PEM); repeatable', collect, [])
    .option('--passphrase-file <file>', 'the passphrase of an encrypted --key, on the first line of this file')
    .option('--json', 'print the verdict as JSON')
    .action((file: string, o: { key: string[]; pub: string[]; passphraseFile?: string; json?: boolean }) => verify(file, o, setExit));

  image
    .command('key')
    .description('Secure Boot v2 signing keys')
    .command('generate')
    .description('Make an RSA-3072 signing key (PEM, written 0600) and print the digest to burn in eFuse')
    .requiredOption('-o, --output <file>', 'where to write the private key')
    .option('--pub <file>', 'also write the public key (PEM) here')
    .option('--force', 'overwrite existing files')
    .action((o: { output: string; pub?: string; force?: boolean }) => {
      const key = generateSigningKey(o.output, { ...(o.pub === undefined ? {} : { pubPath: o.pub }), force: o.force === true });
      process.stdout.write(
        `${o.output}: new RSA-3072 signing key, mode 0600: keep it offline (docs/secure-boot.md)\n` +
          `  key digest (SECURE_BOOT_DIGESTn): ${key.digest}\n` +
          (o.pub === undefined ? '' : `  ${o.pub}: its public key\n`),
      );
    });
}
