// What `fleet flash` writes: a single app image (into the first OTA slot, with otadata erased so the
// bootloader boots it, as `idf.py flash` leaves it), `offset file` pairs, or an ESP-IDF / Moddable
// build's flasher_args.json (or the build folder holding it). Checked before anything is written:
// sector alignment, overlaps, the flash's size, and each file against the partition it starts.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileErrorMessage, isFileSystemError } from '../../cloud/file-errors.ts';
import { IMAGE_MAGIC } from '../../firmware/image/app-image.ts';
import { otaSlots, parsePartitionTable, PARTITION_TABLE_OFFSET, type PartitionEntry } from '../../firmware/image/partition-table.ts';

export interface FlashFile {
  address: number;
  path: string;
  data: Uint8Array;
}

export interface FlashPlan {
  files: FlashFile[];
  /** Regions to erase first (otadata for a single app image). */
  erase: { address: number; size: number; why: string }[];
  /** The chip the build names (flasher_args.json's extra_esptool_args.chip), if any. */
  chip?: string;
}

/** A usage problem with the inputs (exit 2), or an image that does not fit (exit 8). */
export class FlashInputError extends Error {
  override name = 'FlashInputError';
}
export class ImageDoesNotFitError extends Error {
  override name = 'ImageDoesNotFitError';
}

const SECTOR = 0x1000;
const hex = (n: number) => `0x${n.toString(16)}`;

export function parseOffset(text: string): number {
  const n = /^0x[0-9a-f]+$/i.test(text) ? parseInt(text, 16) : /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw new FlashInputError(`not a flash offset (0x… or decimal): ${JSON.stringify(text)}`);
  if (n % SECTOR !== 0) throw new FlashInputError(`offset ${hex(n)} is not on a 4 KB sector boundary`);
  return n;
}

function readInput(path: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(path));
  } catch (err) {
    throw isFileSystemError(err) ? new FlashInputError(fileErrorMessage(err)) : err;
  }
}

/** flasher_args.json as ESP-IDF writes it (idf.py build; Moddable's mcconfig builds through ESP-IDF too). */
function fromFlasherArgs(jsonPath: string): FlashPlan {
  let args: { flash_files?: Record<string, string>; extra_esptool_args?: { chip?: string } };
  try {
    args = JSON.parse(readFileSync(jsonPath, 'utf8'));
  } catch (err) {
    throw new FlashInputError(isFileSystemError(err) ? fileErrorMessage(err) : `cannot read ${jsonPath} as flasher_args.json: ${(err as Error).message}`);
  }
  const entries = Object.entries(args.flash_files ?? {});
  if (entries.length === 0) throw new FlashInputError(`${jsonPath} has no flash_files`);
  const base = dirname(jsonPath);
  const files = entries.map(([offset, file]) => ({ address: parseOffset(offset), path: resolve(base, file), data: readInput(resolve(base, file)) }));
  return { files, erase: [], ...(args.extra_esptool_args?.chip ? { chip: args.extra_esptool_args.chip } : {}) };
}

/** Turns the command line's inputs into what to write, given the partition table the product uses. */
export function planFlash(inputs: string[], productTable: PartitionEntry[]): FlashPlan {
  if (inputs.length === 0) throw new FlashInputError('nothing to flash: give an image, offset/file pairs, or a flasher_args.json');
  if (inputs.length === 1) {
    const input = inputs[0]!;
    if (existsSync(input) && statSync(input).isDirectory()) {
      for (const candidate of [join(input, 'flasher_args.json'), join(input, 'build', 'flasher_args.json')]) if (existsSync(candidate)) return fromFlasherArgs(candidate);
      throw new FlashInputError(`${input} is a folder without flasher_args.json (nor build/flasher_args.json): is it an ESP-IDF or Moddable build folder?`);
    }
    if (basename(input).endsWith('.json')) return fromFlasherArgs(input);
    const data = readInput(input);
    if (data[0] !== IMAGE_MAGIC) throw new FlashInputError(`${input} is not an app image (first byte 0x${(data[0] ?? 0).toString(16)}, expected 0xe9): give offset/file pairs for other data`);
    const slot = otaSlots(productTable)[0] ?? productTable.find((p) => p.type === 0);
    const otadata = productTable.find((p) => p.type === 1 && p.subtype === 0);
    if (!slot) throw new FlashInputError('the partition table has no app partition');
    return { files: [{ address: slot.offset, path: input, data }], erase: otadata ? [{ address: otadata.offset, size: otadata.size, why: 'otadata (boot the first OTA slot)' }] : [] };
  }
  if (inputs.length % 2 !== 0) throw new FlashInputError(`offset/file pairs expected, got ${inputs.length} arguments`);
  const files: FlashFile[] = [];
  for (let i = 0; i < inputs.length; i += 2) files.push({ address: parseOffset(inputs[i]!), path: inputs[i + 1]!, data: readInput(inputs[i + 1]!) });
  return { files, erase: [] };
}

/**
 * The partition table that will be on the board after flashing: the one being written at 0x8000, or
 * else the product's; every file that starts a partition must fit it, and everything must fit the flash.
 */
export function checkPlan(plan: FlashPlan, productTable: PartitionEntry[], flashSizeBytes: number): PartitionEntry[] {
  const written = plan.files.find((f) => f.address === PARTITION_TABLE_OFFSET);
  const table = written ? parsePartitionTable(written.data).entries : productTable;
  const sorted = [...plan.files].sort((a, b) => a.address - b.address);
  for (let i = 0; i < sorted.length; i++) {
    const f = sorted[i]!;
    const end = f.address + f.data.length;
    if (end > flashSizeBytes) throw new ImageDoesNotFitError(`${basename(f.path)} (${f.data.length} bytes at ${hex(f.address)}) ends beyond the ${flashSizeBytes / 1024 / 1024} MB flash`);
    const next = sorted[i + 1];
    if (next && next.address < end) throw new FlashInputError(`${basename(f.path)} (${hex(f.address)}–${hex(end)}) overlaps ${basename(next.path)} at ${hex(next.address)}`);
    const part = table.find((p) => p.offset === f.address);
    if (part && f.data.length > part.size) {
      throw new ImageDoesNotFitError(`${basename(f.path)} is ${f.data.length} bytes; partition ${part.name} at ${hex(part.offset)} holds ${part.size} bytes`);
    }
  }
  return table;
}
