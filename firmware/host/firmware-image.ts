// The product's firmware as a virtual board flashes it: the one partition table
// (firmware/partitions.csv) and ESP-IDF app images that carry the XS firmware bundle: platform/moddable,
// the code that ships on a board, over the emulated Moddable SDK (firmware/sim/,
// docs/moddable-emulation.md). Both are built once per process: tests start many boards, and each
// board's factory flash needs them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chipByName, type ChipName, type ChipSpec } from '../image/chips.ts';
import { parsePartitionCsv } from '../image/partition-csv.ts';
import type { PartitionEntry } from '../image/partition-table.ts';
import { buildVirtualAppImage, DEFAULT_PROJECT_NAME } from '../image/xs-payload.ts';
import { bundleForSim, SIM_APP } from '../sim/bundle.ts';

export const PARTITIONS_CSV = fileURLToPath(new URL('../partitions.csv', import.meta.url));
export const DEFAULT_CHIP: ChipName = 'esp32s3';
export const DEFAULT_FLASH_BYTES = 8 * 1024 * 1024;

let bundle: Promise<string> | undefined;
let partitions: PartitionEntry[] | undefined;
const images = new Map<string, Promise<Uint8Array>>();

/** The firmware bundle for XS (esbuild), built once per process. */
export function firmwareBundle(): Promise<string> {
  bundle ??= bundleForSim(SIM_APP);
  return bundle;
}

/** firmware/partitions.csv, parsed once. */
export function productPartitions(): PartitionEntry[] {
  partitions ??= parsePartitionCsv(readFileSync(PARTITIONS_CSV, 'utf8'), PARTITIONS_CSV);
  return partitions.map((p) => ({ ...p }));
}

/** The app image of the firmware at `version` (the version goes into its esp_app_desc_t), built once per process. */
export function firmwareImage(version: string, o: { chip?: ChipSpec; projectName?: string } = {}): Promise<Uint8Array> {
  const chip = o.chip ?? chipByName(DEFAULT_CHIP);
  const key = `${chip.name}/${o.projectName ?? DEFAULT_PROJECT_NAME}/${version}`;
  let image = images.get(key);
  if (!image) {
    image = firmwareBundle().then((b) => buildVirtualAppImage({ chip, version, bundle: b, ...(o.projectName ? { projectName: o.projectName } : {}) }));
    images.set(key, image);
  }
  return image;
}
