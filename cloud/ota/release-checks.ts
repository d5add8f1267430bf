// The checks a release's image passes before anything is stored (docs/firmware-images.md): it is an
// ESP-IDF app image the bootloader would accept (the project's own reader, firmware/image/), for the
// release's chip, with an app descriptor naming the release's version and project, whose appended
// SHA-256 is right, and no larger than the OTA slot of the product's partition table. A refusal names
// both values. The `fleet` command runs the same checks on an image it does not upload (--url).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { verifyAppImageBytes } from '../../firmware/image/app-image.ts';
import type { AppDescriptor } from '../../firmware/image/app-desc.ts';
import { chipById, type ChipSpec } from '../../firmware/image/chips.ts';
import { parsePartitionCsv } from '../../firmware/image/partition-csv.ts';
import { ApiError } from '../errors.ts';

const PARTITIONS_CSV = fileURLToPath(new URL('../../firmware/partitions.csv', import.meta.url));

/**
 * The largest image a release may carry: the OTA slot (ota_0) of firmware/partitions.csv, the one
 * partition table of real and virtual boards (3 MB, DESIGN.md section 7).
 */
export const MAX_IMAGE_BYTES: number = (() => {
  const slot = parsePartitionCsv(readFileSync(PARTITIONS_CSV, 'utf8'), PARTITIONS_CSV).find((p) => p.name === 'ota_0');
  if (!slot) throw new Error(`${PARTITIONS_CSV} has no ota_0 partition`);
  return slot.size;
})();

export interface ReleaseExpectation {
  version: string;
  chip: ChipSpec;
  /** The project the track's images are for; undefined: the first hosted image of a track sets it. */
  project?: string | undefined;
}

export interface CheckedImage {
  size: number;
  /** SHA-256 of the whole file: what the manifest carries. */
  sha256: string;
  descriptor: AppDescriptor;
}

const chipName = (id: number) => chipById(id)?.displayName ?? `unknown chip id ${id}`;

/** Throws the catalog error of the first check that fails; returns what the manifest needs. */
export function checkReleaseImage(bytes: Uint8Array, fileSha256: string, expect: ReleaseExpectation): CheckedImage {
  if (bytes.length > MAX_IMAGE_BYTES) throw new ApiError('image_too_large', { limit_bytes: MAX_IMAGE_BYTES, size: bytes.length }, `The image has ${bytes.length} bytes; the OTA slot holds ${MAX_IMAGE_BYTES}`);
  const check = verifyAppImageBytes(bytes, { partitionSize: MAX_IMAGE_BYTES });
  if (!check.header) throw invalid(check.problems.map((p) => p.message));
  if (check.header.chipId !== expect.chip.imageChipId) {
    const found = chipName(check.header.chipId);
    throw new ApiError('image_chip_mismatch', { release_chip: expect.chip.displayName, image_chip: found }, `The image is built for ${found}; the release is for ${expect.chip.displayName}`);
  }
  const hashProblem = check.problems.find((p) => p.message.startsWith('Image hash failed'));
  if (hashProblem && check.sha256) {
    throw new ApiError(
      'image_sha256_mismatch',
      { image_carries: check.sha256.stored, computed: check.sha256.calculated },
      `The image carries SHA-256 ${check.sha256.stored} but its bytes hash to ${check.sha256.calculated} (corrupt)`,
    );
  }
  if (!check.ok) throw invalid(check.problems.map((p) => p.message));
  const d = check.appDescriptor;
  if (!d) throw invalid(['no esp_app_desc_t at the start of the first segment']);
  if (d.version !== expect.version) {
    throw new ApiError('image_version_mismatch', { release_version: expect.version, image_version: d.version }, `The image's app descriptor says version ${d.version}; the release is ${expect.version}`);
  }
  if (expect.project !== undefined && d.projectName !== expect.project) {
    throw new ApiError(
      'image_project_mismatch',
      { release_project: expect.project, image_project: d.projectName },
      `The image's app descriptor names project ${d.projectName}; the release is for ${expect.project}`,
    );
  }
  return { size: bytes.length, sha256: fileSha256, descriptor: d };
}

function invalid(problems: string[]): ApiError {
  const list = problems.slice(0, 8);
  return new ApiError('invalid_image', { problems: list }, `The image is not a valid ESP-IDF app image: ${list[0] ?? 'unreadable'}`);
}
