// `fleet firmware release|revoke|list|tracks`: a track's versions (docs/firmware-images.md, staged
// rollouts in docs/staged-rollouts.md). `fleet firmware signing` is signing.ts's, `fleet firmware
// health` health.ts's.
import type { Command } from 'commander';
import { path } from '../client.ts';
import { positiveWholeNumber, wholeNumber } from '../cli/number-options.ts';
import { topic, type CommandContext } from './context.ts';
import { formatStartedRollout } from './inventory.ts';
import { releaseFirmware, releaseOptions, rolloutSettings, type ReleaseOptions } from './release.ts';

export function firmwareCommands(program: Command, { client, print }: CommandContext): void {
  const firmware = topic(program, 'firmware');
  releaseOptions(
    firmware
      .command('release')
      .description('Create a RELEASED version of a track; --image uploads the image, which the cloud checks and hosts (docs/firmware-images.md)')
      .argument('<class>')
      .argument('<product_hex>', '0x and 8 hex digits')
      .argument('<application>')
      .argument('<version>', 'YYYY.MM.bb')
      .option('--image <file>', 'the app image: uploaded to the cloud (checked, hosted); with --url only checked here, its size and sha256 sent')
      .option('--url <url>', 'where devices download the image, when the cloud does not host it (a CDN)')
      .option('--size <bytes>', 'image size (with --url)', positiveWholeNumber)
      .option('--sha256 <hex>', 'image SHA-256 (with --url)')
      .option('--no-image', 'no image, on purpose: a version devices already run and never download (a factory image), so that the update check tells them they are up to date'),
    wholeNumber,
  ).action(async (cls: string, productHex: string, application: string, version: string, o: ReleaseOptions) => {
    print(await releaseFirmware(client(), cls, productHex, application, version, o));
    // The manifest is stdout (for scripts); what the release means for devices, stderr.
    if (o.image === false) process.stderr.write(`released ${version} without an image: devices that run it are told they are up to date; a device on an older version offered it would have nothing to download\n`);
    if (rolloutSettings(o)) {
      const { body } = await client().request('GET', path('admin', 'firmware', cls, productHex, application, version, 'rollout'));
      process.stderr.write(formatStartedRollout(body as Parameters<typeof formatStartedRollout>[0], [cls, productHex, application]));
    }
  });
  firmware
    .command('revoke')
    .description('Make a version REVOKED: it is never offered again')
    .argument('<class>')
    .argument('<product_hex>')
    .argument('<application>')
    .argument('<version>')
    .action(async (cls: string, productHex: string, application: string, version: string) => {
      print((await client().request('POST', path('admin', 'firmware', cls, productHex, application, version, 'revoke'))).body);
    });
  firmware
    .command('list')
    .description('Every version of a track, oldest first')
    .argument('<class>')
    .argument('<product_hex>')
    .argument('<application>')
    .action(async (cls: string, productHex: string, application: string) => {
      const { body } = await client().request('GET', path('admin', 'firmware', cls, productHex, application));
      type Listed = { version: string; status: string; released_at: string; size?: number; hosted: boolean; rollout: { state: string; effective_percent: number } | null; signed_by: { block: number; key_digest: string; key_label?: string } | null };
      const versions = (body as { versions: Listed[] }).versions;
      if (versions.length === 0) process.stdout.write('no versions\n');
      for (const v of versions) {
        const rollout = v.rollout ? `  rollout ${v.rollout.state} ${v.rollout.effective_percent} %` : '';
        const signed = v.signed_by ? `  signed by ${v.signed_by.key_digest.slice(0, 16)}…${v.signed_by.key_label ? ` (${v.signed_by.key_label})` : ''}` : '';
        process.stdout.write(`${v.version}  ${v.status.padEnd(8)}  ${v.released_at}${v.size ? `  ${v.size} bytes` : ''}${v.hosted ? '  hosted' : ''}${signed}${rollout}\n`);
      }
    });
  firmware
    .command('tracks')
    .description('Every track that has a release')
    .action(async () => {
      const { tracks } = (await client().request('GET', '/admin/firmware')).body as { tracks: { class: string; product_hex: string; application: string; released: number; revoked: number; latest: string | null }[] };
      if (tracks.length === 0) process.stdout.write('no tracks\n');
      for (const t of tracks) process.stdout.write(`${t.class} ${t.product_hex} ${t.application}  ${t.released} released, ${t.revoked} revoked, latest ${t.latest ?? '-'}\n`);
    });
}
