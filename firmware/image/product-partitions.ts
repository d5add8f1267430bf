// The product's partition table (firmware/partitions.csv): what the firmware build links against,
// what `fleet image` and the flashing tools lay an image out by, and what the virtual boards' flash
// is cut into. One file, read once, for real boards and virtual ones alike.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parsePartitionCsv } from './partition-csv.ts';
import type { PartitionEntry } from './partition-table.ts';

export const PARTITIONS_CSV = fileURLToPath(new URL('../partitions.csv', import.meta.url));

let partitions: PartitionEntry[] | undefined;

/** firmware/partitions.csv, parsed once; each call gets its own copy. */
export function productPartitions(): PartitionEntry[] {
  partitions ??= parsePartitionCsv(readFileSync(PARTITIONS_CSV, 'utf8'), PARTITIONS_CSV);
  return partitions.map((p) => ({ ...p }));
}

/** The largest app image the product takes: its first OTA slot (ota_0), 3 MB (DESIGN.md section 7). */
export function productOtaSlotBytes(): number {
  const slot = productPartitions().find((p) => p.name === 'ota_0');
  if (!slot) throw new Error(`${PARTITIONS_CSV} has no ota_0 partition`);
  return slot.size;
}
