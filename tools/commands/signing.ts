// `fleet firmware signing <class> <product_hex> <application>`: a track's signing setting
// (docs/secure-boot.md, The cloud). Without options it shows the setting; `--require` makes the cloud
// refuse image uploads not signed by a trusted key, `--off` only names the key that signed; `--key`
// (a PEM public or private RSA-3072 key, as openssl or `fleet image key generate` makes it) and
// `--digest` (64 hex digits, as `espsecure digest-sbv2-public-key` prints) replace the trusted keys,
// which are otherwise kept. A key is known by its digest; `--label` gives it a name people use ("release
// 2026", "lab"), in the order the keys were given. A file's name is no name for a key: it is where one
// copy was on one machine (key.pem, pub.pem), so it is never taken as the label. A key given without a
// label keeps the one the track has for it. A key file that is not such a key is a usage error (exit
// 2), named.
import type { Static } from '@sinclair/typebox';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { TrackSigning } from '../../cloud/schema/api.ts';
import { path } from '../client.ts';
import { loadVerifyingKey } from '../signing-keys.ts';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';
import { topic, type CommandContext } from './context.ts';

type SigningView = Static<typeof TrackSigning>;

/** A trusted key as the setting lists it. */
type KeyEntry = SigningView['keys'][number];

/** The Secure Boot v2 digest of a PEM key file. */
export function digestOfFile(file: string): string {
  return loadVerifyingKey(file, undefined, { name: `--key ${file}`, encrypted: 'give its public key instead (openssl pkey -in it -pubout -out pub.pem)' }).digest;
}

/** A usage error of this command's options (exit 2), refused before anything is sent. */
export class SigningOptionError extends Error {
  override name = 'SigningOptionError';
  readonly exitCode = EXIT_CODES.usage;
}

/**
 * The trusted keys given (`digests`, the --key files' then the --digest values), each with the label
 * given in the same place, else the label `current` has for that digest, else none.
 */
export function labelledKeys(digests: string[], labels: string[], current: KeyEntry[]): KeyEntry[] {
  if (labels.length > digests.length) {
    throw new SigningOptionError(
      digests.length === 0
        ? '--label names the keys given with --key or --digest (in that order); give the keys with their labels'
        : `${labels.length} labels for ${digests.length} key${digests.length === 1 ? '' : 's'}: each --label names the key given in the same place (the --key files first, then the --digest values)`,
    );
  }
  return digests.map((digest, i) => {
    const label = labels[i] ?? current.find((k) => k.digest === digest)?.label;
    return label === undefined ? { digest } : { digest, label };
  });
}

function digestArgument(value: string, previous: string[] = []): string[] {
  if (!/^[0-9a-fA-F]{64}$/.test(value)) throw new InvalidArgumentError(`must be a key digest, 64 hexadecimal digits: ${value.slice(0, 80)}`);
  return [...previous, value.toLowerCase()];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function formatSigning(s: SigningView): string {
  const track = `${s.class}/${s.product_hex}/${s.application}`;
  const state = s.required ? 'signed images required' : 'signing off (a signed image is accepted, its key named)';
  const lines = [`${track}: ${state}${s.updated_at ? `, set ${s.updated_at}` : ', never set'}`];
  if (s.keys.length === 0) lines.push('  no trusted keys');
  for (const k of s.keys) lines.push(`  ${k.digest}  ${k.label ?? '(no label)'}`);
  return lines.join('\n') + '\n';
}

interface SigningOptions {
  require?: boolean;
  off?: boolean;
  key?: string[];
  digest?: string[];
  label?: string[];
  json?: boolean;
}

export function signingCommand(program: Command, { client }: CommandContext): void {
  const firmware = topic(program, 'firmware');
  firmware
    .command('signing')
    .description("Show or set a track's signing setting: with --require the cloud refuses images not signed by a trusted key (docs/secure-boot.md)")
    .argument('<class>')
    .argument('<product_hex>', '0x and 8 hex digits')
    .argument('<application>')
    .addOption(new Option('--require', 'refuse image uploads unless signed by a trusted key (Secure Boot v2)').conflicts('off'))
    .addOption(new Option('--off', 'accept unsigned images; a signed image still has its key named'))
    .option('--key <pem>', 'a trusted key: a PEM RSA-3072 public or private key file (repeat for more); replaces the trusted keys', collect)
    .option('--digest <hex>', 'a trusted key by its digest, 64 hex digits (repeat for more); replaces the trusted keys', digestArgument)
    .option('--label <text>', "a name for a key given (repeat: the first names the first --key, and so on, then the --digest values); a key given without one keeps its label", collect)
    .option('--json', 'the API answer as JSON')
    .action(async (cls: string, productHex: string, application: string, o: SigningOptions) => {
      const at = path('admin', 'tracks', cls, productHex, application, 'signing');
      const digests = [...(o.key ?? []).map(digestOfFile), ...(o.digest ?? [])];
      if ((o.label?.length ?? 0) > digests.length) labelledKeys(digests, o.label!, []);
      let view = (await client().request('GET', at)).body as SigningView;
      if (o.require || o.off || digests.length > 0) {
        const keys = digests.length > 0 ? labelledKeys(digests, o.label ?? [], view.keys) : view.keys;
        view = (await client().request('PUT', at, { required: o.require ? true : o.off ? false : view.required, keys })).body as SigningView;
      }
      process.stdout.write(o.json ? JSON.stringify(view, null, 2) + '\n' : formatSigning(view));
    });
}
