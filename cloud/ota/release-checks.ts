// The checks a release's image passes before anything is stored (docs/firmware-images.md): it is an
// ESP-IDF app image the bootloader would accept (the project's own reader, firmware/image/), for the
// release's chip, with an app descriptor naming the release's version and project, whose appended
// SHA-256 is right, and no larger than the OTA slot of the product's partition table. A refusal names
// both values. The `fleet` command runs the same checks on an image it does not upload (--url).
// Last, its Secure Boot v2 signature (docs/secure-boot.md, The cloud): refused unless signed by a key the
// track trusts when the track's signing setting requires it; otherwise the key that signed is only named.
import { verifyAppImageBytes } from '../../firmware/image/app-image.ts';
import type { AppDescriptor } from '../../firmware/image/app-desc.ts';
import { chipById, type ChipSpec } from '../../firmware/image/chips.ts';
import { productOtaSlotBytes } from '../../firmware/image/product-partitions.ts';
import { readSignatureSector, SIG_SECTOR_BYTES, signatureSectorOffset, verifySignedImage, type VerifyFailure } from '../../firmware/image/secure-boot.ts';
import { ApiError, type ErrorCode } from '../errors.ts';
import type { ImageSigner } from '../store/types.ts';

/**
 * The largest image a release may carry: the OTA slot (ota_0) of firmware/partitions.csv, the one
 * partition table of real and virtual boards (3 MB, DESIGN.md section 7).
 */
export const MAX_IMAGE_BYTES: number = productOtaSlotBytes();

export interface ReleaseExpectation {
  version: string;
  chip: ChipSpec;
  /** The project the track's images are for; undefined: the first hosted image of a track sets it. */
  project?: string | undefined;
  /** The track's signing setting; absent or null: signing off (a signed image's key is still named). */
  signing?: SigningRule | null | undefined;
}

/** What the signature check needs of a track's signing setting. */
export interface SigningRule {
  required: boolean;
  keys: readonly { digest: string }[];
}

export interface CheckedImage {
  size: number;
  /** SHA-256 of the whole file: what the manifest carries. */
  sha256: string;
  descriptor: AppDescriptor;
  /** The signature block that verified and its key; undefined when none did (unsigned, or signing off). */
  signedBy?: ImageSigner | undefined;
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
  const signedBy = checkImageSignature(bytes, check.length, expect.signing);
  return { size: bytes.length, sha256: fileSha256, descriptor: d, ...(signedBy ? { signedBy } : {}) };
}

const SIGNATURE_REFUSALS: Record<VerifyFailure, { code: ErrorCode; lead: string }> = {
  unsigned: { code: 'image_not_signed', lead: 'The track requires signed images; this image is not signed' },
  damaged: { code: 'image_signature_damaged', lead: "The image's signature block is damaged" },
  tampered: { code: 'image_tampered', lead: 'The image changed after it was signed' },
  untrusted: { code: 'image_signer_not_trusted', lead: 'The image is not signed by a key this track trusts' },
  // A track's setting revokes a key by leaving it out: "untrusted".
  revoked: { code: 'image_signer_not_trusted', lead: 'The image is not signed by a key this track trusts' },
  bad_signature: { code: 'image_signature_invalid', lead: "The image's RSA-PSS signature does not verify" },
};

/**
 * The Secure Boot v2 signature of a release image whose app image is `imageLength` bytes: its signature
 * sector is where the bootloader reads it, on the next 4 KB boundary (the image padded with 0xFF up to
 * it, then 4 KB). With `signing.required`, refused with a catalog error naming the key digests found
 * and trusted unless a block verifies with a trusted key; otherwise the first block that verifies with
 * its own key is named, and nothing is refused.
 */
export function checkImageSignature(bytes: Uint8Array, imageLength: number, signing: SigningRule | null | undefined): ImageSigner | undefined {
  const sectorAt = signatureSectorOffset(imageLength);
  const read = (offset: number, length: number) => bytes.subarray(offset, offset + length);
  const hasSector = bytes.length >= sectorAt + SIG_SECTOR_BYTES;
  if (!signing?.required) {
    const sector = hasSector ? readSignatureSector(bytes, sectorAt) : null;
    if (!sector) return undefined;
    const own = sector.blocks.filter((b) => b.problem === undefined).map((b) => ({ digest: b.keyDigest }));
    const by = verifySignedImage(read, sectorAt, own).signedBy;
    return by && { block: by.block, keyDigest: by.keyDigest };
  }
  const trusted = signing.keys.map((k) => ({ digest: k.digest.toLowerCase() }));
  const verdict = hasSector ? verifySignedImage(read, sectorAt, trusted) : undefined;
  if (verdict?.signedBy) return { block: verdict.signedBy.block, keyDigest: verdict.signedBy.keyDigest };
  const failure = verdict?.failure ?? {
    kind: 'unsigned' as const,
    message:
      bytes.length > imageLength
        ? `${bytes.length - imageLength} bytes follow the ${imageLength}-byte image, not a 4 KB signature sector at offset 0x${sectorAt.toString(16)}`
        : `no signature sector at offset 0x${sectorAt.toString(16)}: the image ends at ${imageLength} bytes`,
  };
  const found = verdict?.blocks.map((b) => b.keyDigest) ?? [];
  const { code, lead } = SIGNATURE_REFUSALS[failure.kind];
  throw new ApiError(
    code,
    { reason: failure.message, sector_offset: sectorAt, keys_found: found, keys_trusted: trusted.map((k) => k.digest) },
    `${lead}: ${failure.message}. Keys found: ${found.join(', ') || 'none'}; trusted: ${trusted.map((k) => k.digest).join(', ')}`,
  );
}

function invalid(problems: string[]): ApiError {
  const list = problems.slice(0, 8);
  return new ApiError('invalid_image', { problems: list }, `The image is not a valid ESP-IDF app image: ${list[0] ?? 'unreadable'}`);
}
