// The product's firmware as a virtual board flashes it: the one partition table
// (firmware/partitions.csv) and ESP-IDF app images that carry the XS firmware bundle. Both are
// built once per process: tests start many boards, and each board's factory flash needs them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chipByName, type ChipName, type ChipSpec } from '../image/chips.ts';
import { parsePartitionCsv } from '../image/partition-csv.ts';
import type { PartitionEntry } from '../image/partition-table.ts';
import { buildVirtualAppImage, DEFAULT_PROJECT_NAME } from '../image/xs-payload.ts';
import { bundleForSim, SIM_APP } from '../sim/bundle.ts';
import { bundleForXs } from '../xs/bundle.ts';

/**
 * Which firmware a virtual board runs: `moddable` is platform/moddable, the code that ships on a
 * board, over the emulated Moddable SDK (firmware/sim/); `xs-host` the older in-XS platform.
 */
export type VirtualPlatform = 'xs-host' | 'moddable';
/** FLEET_VIRTUAL_PLATFORM=moddable|xs-host picks it for a whole run (tests, the bench). */
export const DEFAULT_PLATFORM: VirtualPlatform = process.env.FLEET_VIRTUAL_PLATFORM === 'moddable' ? 'moddable' : 'xs-host';
const XS_HOST_ENTRY = fileURLToPath(new URL('../src/platform/xs-host/main.ts', import.meta.url));
export const PARTITIONS_CSV = fileURLToPath(new URL('../partitions.csv', import.meta.url));
export const DEFAULT_CHIP: ChipName = 'esp32s3';
export const DEFAULT_FLASH_BYTES = 8 * 1024 * 1024;

const bundles = new Map<VirtualPlatform, Promise<string>>();
let partitions: PartitionEntry[] | undefined;
const images = new Map<string, Promise<Uint8Array>>();

/** The firmware bundle for XS (esbuild), built once per process and platform. */
export function firmwareBundle(platform: VirtualPlatform = DEFAULT_PLATFORM): Promise<string> {
  let bundle = bundles.get(platform);
  if (!bundle) {
    bundle = platform === 'moddable' ? bundleForSim(SIM_APP) : bundleForXs(XS_HOST_ENTRY);
    bundles.set(platform, bundle);
  }
  return bundle;
}

/** firmware/partitions.csv, parsed once. */
export function productPartitions(): PartitionEntry[] {
  partitions ??= parsePartitionCsv(readFileSync(PARTITIONS_CSV, 'utf8'), PARTITIONS_CSV);
  return partitions.map((p) => ({ ...p }));
}

/** The app image of the firmware at `version` (the version goes into its esp_app_desc_t), built once per process. */
export function firmwareImage(version: string, o: { chip?: ChipSpec; projectName?: string; platform?: VirtualPlatform } = {}): Promise<Uint8Array> {
  const chip = o.chip ?? chipByName(DEFAULT_CHIP);
  const platform = o.platform ?? DEFAULT_PLATFORM;
  const key = `${chip.name}/${o.projectName ?? DEFAULT_PROJECT_NAME}/${version}/${platform}`;
  let image = images.get(key);
  if (!image) {
    image = firmwareBundle(platform).then((b) => buildVirtualAppImage({ chip, version, bundle: b, ...(o.projectName ? { projectName: o.projectName } : {}) }));
    images.set(key, image);
  }
  return image;
}
