// The otadata partition on a virtual board's flash: two sectors, one esp_ota_select_entry_t at the
// start of each (firmware/image/otadata.ts for the format). Rewriting an entry erases its sector
// and programs the 32 bytes, as the bootloader's write_otadata and esp_ota_ops' rewrite_ota_seq do.
import { activeOtadata, decodeOtaSelectEntry, encodeOtaSelectEntry, nextSeqFor, OTA_IMG_STATE, OTA_SELECT_ENTRY_BYTES, OTADATA_SECTOR_BYTES, type OtaSelectEntry } from '../image/otadata.ts';
import type { PartitionEntry } from '../image/partition-table.ts';
import type { FlashImage } from './flash-image.ts';

export class OtadataStore {
  constructor(
    private readonly flash: FlashImage,
    readonly partition: PartitionEntry,
  ) {}

  read(): [OtaSelectEntry, OtaSelectEntry] {
    const at = this.partition.offset;
    return [
      decodeOtaSelectEntry(this.flash.read(at, OTA_SELECT_ENTRY_BYTES)),
      decodeOtaSelectEntry(this.flash.read(at + OTADATA_SECTOR_BYTES, OTA_SELECT_ENTRY_BYTES)),
    ];
  }

  write(index: 0 | 1, entry: { seq: number; state: number; label?: Uint8Array }): void {
    const at = this.partition.offset + index * OTADATA_SECTOR_BYTES;
    this.flash.erase(at, OTADATA_SECTOR_BYTES);
    this.flash.program(at, encodeOtaSelectEntry(entry));
  }

  /**
   * Selects OTA slot `index` of `slotCount` for the next boot, state NEW, in the entry not active now:
   * what esp_ota_set_boot_partition writes once it has accepted the image (and otatool's
   * switch_ota_partition writes with no check at all).
   */
  selectNew(index: number, slotCount: number): void {
    const two = this.read();
    const active = activeOtadata(two);
    const next: 0 | 1 = active === -1 ? 0 : active === 0 ? 1 : 0;
    this.write(next, { seq: nextSeqFor(index, slotCount, active === -1 ? null : two[active].seq), state: OTA_IMG_STATE.new, label: two[next].label });
  }
}
