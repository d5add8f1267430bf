// What `fleet image info` prints about any ESP32 app image: ours, or one built by ESP-IDF or the
// Moddable SDK. Everything comes from verifyAppImage, so the verdict is the bootloader's.
import { sha256 } from '@noble/hashes/sha2.js';
import type { AppDescriptor } from './app-desc.ts';
import { FLASH_FREQS, FLASH_MODES, FLASH_SIZES, verifyAppImageBytes, type ImageProblem } from './app-image.ts';
import { hex, hex32 } from './bytes.ts';
import { readSignatureSector, SIG_SECTOR_BYTES, verifySignedImage } from './secure-boot.ts';
import { virtualFirmwareOf } from './virtual-payload.ts';

export interface ImageDescription {
  bytes: number;
  /** SHA-256 of the whole file: what an OTA manifest's `sha256` is. */
  fileSha256: string;
  valid: boolean;
  chip: string;
  chipId: number | null;
  flash: { mode: string; freq: string; size: string } | null;
  entry: string | null;
  chipRevision: { min: string; max: string } | null;
  segments: { index: number; load: string; region: string; length: number; fileOffset: string; mapped: boolean }[];
  checksum: { stored: string; calculated: string } | null;
  sha256: { stored: string; calculated: string } | null;
  app: AppDescriptor | null;
  /** The firmware a virtual board runs (an image of ours), inflated; null for native code. */
  virtualFirmwareBytes: number | null;
  problems: ImageProblem[];
  /** The Secure Boot v2 signature sector at the end of the file, read without a trusted key; null when unsigned. */
  signatures: SignatureDescription | null;
}

export interface SignatureDescription {
  /** Bytes the blocks sign (everything before the sector), and their SHA-256. */
  contentLength: number;
  digest: string;
  blocks: {
    index: number;
    keyDigest: string;
    /** Sound: the block is intact, signs this content, and its signature verifies with the key it carries. */
    state: 'sound' | 'damaged' | 'tampered' | 'bad_signature';
    problem?: string;
  }[];
}

const nameOf = (table: Record<string, number>, value: number) => Object.entries(table).find(([, v]) => v === value)?.[0] ?? hex32(value, 1);
const revision = (full: number) => `v${Math.floor(full / 100)}.${full % 100}`;

export function describeImage(image: Uint8Array): ImageDescription {
  const check = verifyAppImageBytes(image);
  const first = check.segments[0];
  const firmware = first && first.dataOffset + first.length <= image.length ? virtualFirmwareOf(image.subarray(first.dataOffset, first.dataOffset + first.length)) : null;
  const h = check.header;
  return {
    bytes: image.length,
    fileSha256: hex(sha256(image)),
    valid: check.ok,
    chip: check.chip?.displayName ?? (h ? `unknown chip id ${h.chipId}` : 'not an app image'),
    chipId: h?.chipId ?? null,
    flash: h ? { mode: FLASH_MODES[h.flashMode] ?? hex32(h.flashMode, 1), freq: nameOf(FLASH_FREQS, h.flashFreq), size: nameOf(FLASH_SIZES, h.flashSize) } : null,
    entry: h ? hex32(h.entry) : null,
    chipRevision: h ? { min: revision(h.minChipRevFull), max: revision(h.maxChipRevFull) } : null,
    segments: check.segments.map((s) => ({ index: s.index, load: hex32(s.loadAddress), region: s.region ?? '?', length: s.length, fileOffset: hex32(s.dataOffset, 0), mapped: s.mapped })),
    checksum: check.checksum ? { stored: hex32(check.checksum.stored, 2), calculated: hex32(check.checksum.calculated, 2) } : null,
    sha256: check.sha256 ?? null,
    app: check.appDescriptor,
    virtualFirmwareBytes: firmware === null ? null : firmware.length,
    problems: check.problems,
    signatures: describeSignatures(image),
  };
}

/**
 * Each signature block checked on its own against the key it carries (as if that key's digest were
 * burned): what needs no key to know. Whether the key is one a chip trusts is `fleet image verify`'s.
 */
export function describeSignatures(image: Uint8Array): SignatureDescription | null {
  const sector = image.length % SIG_SECTOR_BYTES === 0 ? readSignatureSector(image) : null;
  if (!sector) return null;
  const content = image.subarray(0, sector.contentLength);
  let digest = '';
  const blocks = sector.blocks.map((b) => {
    // The block alone in a sector of its own, so that another block with the same key cannot answer for it.
    const alone = new Uint8Array(SIG_SECTOR_BYTES).fill(0xff);
    alone.set(b.raw, 0);
    const verdict = verifySignedImage((offset, length) => (offset === 0 ? content.subarray(0, length) : alone.subarray(0, length)), sector.contentLength, [{ digest: b.keyDigest }]);
    digest = verdict.digest;
    const failure = verdict.failure;
    const state = verdict.ok ? 'sound' : failure?.kind === 'tampered' || failure?.kind === 'bad_signature' ? failure.kind : 'damaged';
    return { index: b.index, keyDigest: b.keyDigest, state, ...(failure ? { problem: failure.message.replace(/^signature block 0\b/, `signature block ${b.index}`) } : {}) } as SignatureDescription['blocks'][number];
  });
  return { contentLength: sector.contentLength, digest, blocks };
}

export function formatImageDescription(d: ImageDescription, name: string): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const lines = [`${name}: ${d.chip} app image, ${n(d.bytes)} bytes, ${d.valid ? 'valid' : 'INVALID'}`];
  if (d.flash) lines.push(`  header: flash ${d.flash.mode} ${d.flash.freq} ${d.flash.size}, entry ${d.entry}, chip id ${d.chipId}, chip revision ${d.chipRevision!.min} to ${d.chipRevision!.max}`);
  for (const s of d.segments) lines.push(`  segment ${s.index}: load ${s.load} ${s.region.padEnd(8)} ${n(s.length).padStart(9)} bytes at file offset ${s.fileOffset}${s.mapped ? ', mapped' : ''}`);
  if (d.checksum) lines.push(`  checksum: ${d.checksum.stored} (calculated ${d.checksum.calculated})`);
  if (d.sha256) lines.push(`  appended SHA-256: ${d.sha256.stored}${d.sha256.stored === d.sha256.calculated ? ' (matches)' : ` (calculated ${d.sha256.calculated})`}`);
  if (d.app) {
    lines.push(`  app: ${d.app.projectName} ${d.app.version}, built ${d.app.date} ${d.app.time}, ESP-IDF ${d.app.idfVersion}, secure version ${d.app.secureVersion}`);
    lines.push(`  ELF SHA-256: ${d.app.elfSha256}`);
  } else if (d.segments.length > 0) lines.push('  app: no esp_app_desc_t at the start of the first segment');
  lines.push(`  virtual board firmware: ${d.virtualFirmwareBytes === null ? 'none (native code; a virtual board cannot run it)' : `${n(d.virtualFirmwareBytes)} bytes (the SDK's host build)`}`);
  lines.push(`  file SHA-256: ${d.fileSha256}`);
  for (const p of d.problems) lines.push(`  problem: ${p.tag}: ${p.message}`);
  if (d.signatures) {
    const s = d.signatures;
    lines.push(`  secure boot v2 signature sector at file offset ${hex32(s.contentLength, 0)}, ${s.blocks.length} block${s.blocks.length === 1 ? '' : 's'}, over ${n(s.contentLength)} bytes with SHA-256 ${s.digest}`);
    for (const b of s.blocks) lines.push(`  signature block ${b.index}: key digest ${b.keyDigest}, ${b.state === 'sound' ? 'sound' : `${b.state.replace('_', ' ')}: ${b.problem}`}`);
  } else lines.push('  secure boot v2: not signed');
  return lines.join('\n') + '\n';
}
