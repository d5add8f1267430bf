// `fleet firmware signing <class> <product_hex> <application>`: a track's signing setting
// (docs/secure-boot.md, The cloud). Without options it shows the setting; `--require` makes the cloud
// refuse image uploads not signed by a trusted key, `--off` only names the key that signed; `--key`
// (a PEM public or private RSA-3072 key, as openssl or `fleet image key generate` makes it) and
// `--digest` (64 hex digits, as `espsecure digest-sbv2-public-key` prints) replace the trusted keys,
// which are otherwise kept. A key file that is not such a key is a usage error (exit 2), named.
import type { Static } from '@sinclair/typebox';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { basename } from 'node:path';
import type { TrackSigning } from '../../cloud/schema/api.ts';
import { path, type CloudClient } from '../client.ts';
import { loadVerifyingKey } from '../signing-keys.ts';

type SigningView = Static<typeof TrackSigning>;

/** The trusted-key entry of a PEM key file: its Secure Boot v2 digest, labelled with the file's name. */
export function keyEntryOfFile(file: string): { digest: string; label: string } {
  const { digest } = loadVerifyingKey(file, undefined, { name: `--key ${file}`, encrypted: 'give its public key instead (openssl pkey -in it -pubout -out pub.pem)' });
  return { digest, label: basename(file).slice(0, 200) };
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
  for (const k of s.keys) lines.push(`  ${k.digest}${k.label ? `  ${k.label}` : ''}`);
  return lines.join('\n') + '\n';
}

interface SigningOptions {
  require?: boolean;
  off?: boolean;
  key?: string[];
  digest?: string[];
  json?: boolean;
}

export function signingCommand(firmware: Command, client: () => CloudClient): void {
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
    .option('--json', 'the API answer as JSON')
    .action(async (cls: string, productHex: string, application: string, o: SigningOptions) => {
      const at = path('admin', 'tracks', cls, productHex, application, 'signing');
      const given = [...(o.key ?? []).map(keyEntryOfFile), ...(o.digest ?? []).map((digest) => ({ digest }))];
      let view = (await client().request('GET', at)).body as SigningView;
      if (o.require || o.off || given.length > 0) {
        const keys = given.length > 0 ? given : view.keys;
        view = (await client().request('PUT', at, { required: o.require ? true : o.off ? false : view.required, keys })).body as SigningView;
      }
      process.stdout.write(o.json ? JSON.stringify(view, null, 2) + '\n' : formatSigning(view));
    });
}
