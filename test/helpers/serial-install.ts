// An app image put into a board's OTA slot without the OTA client, as a serial flashing tool
// (`esptool write_flash`) and otatool's `switch_ota_partition` would: nothing checks the image, so
// the boot stage's own checks (secure boot, anti-rollback) are what decides. The OTA client's
// refusals are tested through esp_ota_ops (OtaSlots) instead.
import { findPartition, otaSlots, PARTITION_TYPES, type PartitionEntry } from '../../firmware/image/partition-table.ts';
import { FLASH_SECTOR_BYTES, type FlashImage } from '../../firmware/virtual-esp32/flash-image.ts';
import { OtadataStore } from '../../firmware/virtual-esp32/otadata-store.ts';

/** Writes `image` into the slot after `running` and selects it for the next boot (state NEW). */
export function installBySerial(flash: FlashImage, table: PartitionEntry[], image: Uint8Array, running: string): void {
  const slots = otaSlots(table);
  const index = (slots.findIndex((p) => p.name === running) + 1) % slots.length;
  const target = slots[index]!;
  flash.erase(target.offset, Math.ceil(image.length / FLASH_SECTOR_BYTES) * FLASH_SECTOR_BYTES);
  flash.program(target.offset, image);
  new OtadataStore(flash, findPartition(table, PARTITION_TYPES.data, 0x00)!).selectNew(index, slots.length);
}
