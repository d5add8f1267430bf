// `fleet firmware release … --image <file>`: the image is streamed to the cloud, which checks it and
// hosts it (docs/firmware-images.md); with `--url` the image stays elsewhere (a CDN) and the same
// checks run here, on the file, before its size and SHA-256 are sent. Either way a release whose image
// names another version, chip or project is refused with both values named.
import { Option, type Command } from 'commander';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chipByName, CHIPS } from '../../firmware/image/chips.ts';
import { path, type CloudClient } from '../client.ts';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';

export interface ReleaseOptions {
  url?: string;
  size?: number;
  sha256?: string;
  /** The image file; false with --no-image (a version devices already run and never download). */
  image?: string | false;
  chip: string;
  project?: string;
  rolloutPercent?: number;
  rolloutGroups?: string[];
  rolloutStepPercent?: number;
  rolloutStepEvery?: number;
  errorThreshold?: number;
  minReports?: number;
}

/** The options `firmware release` adds for images and rollouts. */
export function releaseOptions(cmd: Command, int: (v: string) => number): Command {
  return cmd
    .addOption(new Option('--chip <chip>', 'the chip the image must be built for').choices(Object.keys(CHIPS)).default('esp32s3'))
    .option('--project <name>', "the project the image's app descriptor must name (default: the track's earlier images)")
    .option('--rollout-percent <n>', 'stage the release: offer it to this percentage of devices (stable per UUID)', int)
    .option('--rollout-groups <group...>', 'stage the release: offer it to these device groups')
    .option('--rollout-step-percent <n>', 'raise the rollout by this much…', int)
    .option('--rollout-step-every <seconds>', '…every so many seconds', int)
    .option('--error-threshold <percent>', 'pause the rollout when failed installs reach this share (default 20)', int)
    .option('--min-reports <n>', '…once this many outcomes are in (default 5)', int);
}

/** The rollout the options ask for (the API's RolloutSettings), or undefined: any rollout option stages the release, from 0 % unless given. */
export function rolloutSettings(o: ReleaseOptions): Record<string, unknown> | undefined {
  const body = Object.fromEntries(
    Object.entries({
      percent: o.rolloutPercent,
      groups: o.rolloutGroups,
      step_percent: o.rolloutStepPercent,
      step_every_seconds: o.rolloutStepEvery,
      error_threshold_percent: o.errorThreshold,
      min_reports: o.minReports,
    }).filter(([, v]) => v !== undefined),
  );
  if (Object.keys(body).length === 0) return undefined;
  return { percent: 0, ...body };
}

/** A release the command refuses before asking the cloud (exit 2, a usage error). */
export class ReleaseUsageError extends Error {
  override name = 'ReleaseUsageError';
  readonly exitCode = EXIT_CODES.usage;
}

/**
 * A release devices cannot download is refused here as by the cloud (image_required): --image, --url, or
 * --no-image said on purpose, for a version devices already run (a factory image; docs/firmware-images.md).
 */
export function checkReleaseImageOptions(version: string, o: ReleaseOptions): void {
  if (o.image === false) {
    const given = [o.url !== undefined && '--url', o.size !== undefined && '--size', o.sha256 !== undefined && '--sha256'].filter(Boolean);
    if (given.length > 0) throw new ReleaseUsageError(`--no-image and ${given.join(', ')}: a release without an image has no url, size or sha256; give one or the other`);
    return;
  }
  if (o.image === undefined && o.url === undefined) {
    throw new ReleaseUsageError(
      `release ${version} has no image: devices offered it would have nothing to download. Give --image <file> (the cloud hosts it) or --url <url> (with --image, or --size and --sha256); for a version devices already run and never download (a factory image), say --no-image`,
    );
  }
}

export async function releaseFirmware(client: CloudClient, cls: string, productHex: string, application: string, version: string, o: ReleaseOptions): Promise<unknown> {
  checkReleaseImageOptions(version, o);
  const rollout = rolloutSettings(o);
  if (o.image && !o.url) {
    const bytes = readFileSync(o.image);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const query = new URLSearchParams({ chip: o.chip, sha256, ...(o.project ? { project: o.project } : {}) });
    // The same settings as query parameters (rollout_percent, rollout_groups=a,b, …).
    for (const [k, v] of Object.entries(rollout ?? {})) query.set(`rollout_${k}`, Array.isArray(v) ? v.join(',') : String(v));
    return (await client.upload('PUT', `${path('admin', 'firmware', cls, productHex, application, version, 'image')}?${query}`, o.image)).body;
  }
  const meta: Record<string, unknown> = {};
  if (o.image) {
    const bytes = readFileSync(o.image);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    // The cloud cannot check an image it does not host: the same checks run here.
    const { checkReleaseImage } = await import('../../cloud/ota/release-checks.ts');
    checkReleaseImage(bytes, sha256, { version, chip: chipByName(o.chip), project: o.project });
    meta.size = bytes.length;
    meta.sha256 = sha256;
  }
  if (o.image === false) meta.no_image = true;
  if (o.url) meta.url = o.url;
  if (o.size !== undefined) meta.size = o.size;
  if (o.sha256) meta.sha256 = o.sha256;
  if (rollout) meta.rollout = rollout;
  return (await client.request('PUT', path('admin', 'firmware', cls, productHex, application, version), meta)).body;
}
