// The app side of OTA on a virtual board: ESP-IDF's esp_ota_ops (components/app_update) over the
// board's flash, with app rollback enabled. The firmware reaches it through the HAL (system.otaBegin,
// runningApp, lastInvalidApp, markAppValid); errors carry ESP-IDF's names.
//   begin   esp_ota_get_next_update_partition + esp_ota_begin: the slot after the running one, erased;
//           refused while the running image is still PENDING_VERIFY (ESP_ERR_OTA_ROLLBACK_INVALID_STATE)
//   write   esp_ota_write: sequential, the first byte must be the image magic
//   finish  esp_ota_end (esp_image_verify of the slot) + esp_ota_set_boot_partition (otadata: the
//           next seq for that slot, state NEW; the bootloader makes it PENDING_VERIFY at the next boot)
import { appDescriptorOfImage, APP_DESC_BYTES, APP_DESC_IMAGE_OFFSET } from '../image/app-desc.ts';
import { IMAGE_MAGIC, verifyAppImage } from '../image/app-image.ts';
import type { ChipSpec } from '../image/chips.ts';
import { activeOtadata, nextSeqFor, OTA_IMG_STATE, seqValid, stateName, type OtaSelectEntry } from '../image/otadata.ts';
import { findPartition, otaSlots, PARTITION_TYPES, type PartitionEntry } from '../image/partition-table.ts';
import { FLASH_SECTOR_BYTES, type FlashImage } from './flash-image.ts';
import { OtadataStore } from './otadata-store.ts';

export interface AppSlotInfo {
  partition: string;
  version: string;
  projectName: string;
  /** esp_ota_img_states_t by name; 'undefined' when otadata has no entry for the slot. */
  state: string;
}

export class OtaOpError extends Error {
  override name = 'OtaOpError';
  constructor(
    readonly code: 'ESP_ERR_INVALID_SIZE' | 'ESP_ERR_OTA_VALIDATE_FAILED' | 'ESP_ERR_OTA_ROLLBACK_INVALID_STATE' | 'ESP_ERR_OTA_PARTITION_CONFLICT' | 'ESP_ERR_NOT_FOUND' | 'ESP_ERR_INVALID_STATE',
    /** What ESP-IDF logs (ESP_LOGE) when it returns the code. */
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

export interface OtaUpdate {
  write(chunk: Uint8Array): void;
  finish(): void;
  abort(): void;
}

export class OtaSlots {
  private readonly slots: PartitionEntry[];
  private readonly store: OtadataStore;

  constructor(
    private readonly flash: FlashImage,
    table: PartitionEntry[],
    private readonly chip: ChipSpec,
    private readonly running: PartitionEntry,
  ) {
    this.slots = otaSlots(table);
    const otadata = findPartition(table, PARTITION_TYPES.data, 0x00);
    if (!otadata) throw new OtaOpError('ESP_ERR_NOT_FOUND', 'no otadata partition');
    this.store = new OtadataStore(flash, otadata);
  }

  private slotOf(e: OtaSelectEntry): PartitionEntry | undefined {
    return seqValid(e) ? this.slots[(e.seq - 1) % this.slots.length] : undefined;
  }

  /** esp_ota_get_state_partition: the state of the newest otadata entry naming the partition. */
  private stateOf(partition: PartitionEntry): string {
    const entries = this.store.read().filter((e) => this.slotOf(e) === partition).sort((a, b) => b.seq - a.seq);
    return entries[0] ? stateName(entries[0].state) : 'undefined';
  }

  private describe(partition: PartitionEntry): AppSlotInfo {
    const desc = appDescriptorOfImage(this.flash.read(partition.offset, APP_DESC_IMAGE_OFFSET + APP_DESC_BYTES));
    return { partition: partition.name, version: desc?.version ?? '', projectName: desc?.projectName ?? '', state: this.stateOf(partition) };
  }

  runningApp(): AppSlotInfo {
    return this.describe(this.running);
  }

  /** esp_ota_get_last_invalid_partition: the newest slot that was rolled back or marked invalid. */
  lastInvalidApp(): AppSlotInfo | null {
    const bad = this.store.read().filter((e) => seqValid(e) && (e.state === OTA_IMG_STATE.aborted || e.state === OTA_IMG_STATE.invalid)).sort((a, b) => b.seq - a.seq)[0];
    const slot = bad && this.slotOf(bad);
    return slot ? this.describe(slot) : null;
  }

  /** esp_ota_mark_app_valid_cancel_rollback: true when the running image was pending and is now VALID. */
  markValid(): boolean {
    const two = this.store.read();
    const active = activeOtadata(two);
    if (active === -1 || this.slotOf(two[active]) !== this.running || two[active].state === OTA_IMG_STATE.valid) return false;
    this.store.write(active, { ...two[active], state: OTA_IMG_STATE.valid });
    return true;
  }

  /** The size of the slot begin() would write (esp_ota_get_next_update_partition). */
  passiveSlotBytes(): number {
    const index = this.slots.indexOf(this.running);
    const target = this.slots[(index + 1) % this.slots.length];
    if (!target || target === this.running) throw new OtaOpError('ESP_ERR_OTA_PARTITION_CONFLICT', 'no OTA slot other than the running one');
    return target.size;
  }

  begin(size: number): OtaUpdate {
    if (this.stateOf(this.running) === 'pending_verify') throw new OtaOpError('ESP_ERR_OTA_ROLLBACK_INVALID_STATE', 'Running app has not confirmed state (ESP_OTA_IMG_PENDING_VERIFY)');
    const index = this.slots.indexOf(this.running);
    const target = this.slots[(index + 1) % this.slots.length];
    if (!target || target === this.running) throw new OtaOpError('ESP_ERR_OTA_PARTITION_CONFLICT', 'no OTA slot other than the running one');
    if (!Number.isInteger(size) || size <= 0 || size > target.size) throw new OtaOpError('ESP_ERR_INVALID_SIZE', `an image of ${size} bytes does not fit ${target.name} (${target.size} bytes)`);
    this.flash.erase(target.offset, Math.ceil(size / FLASH_SECTOR_BYTES) * FLASH_SECTOR_BYTES);
    let written = 0;
    let open = true;
    const ensureOpen = () => {
      if (!open) throw new OtaOpError('ESP_ERR_INVALID_STATE', 'the OTA handle is closed');
    };
    return {
      write: (chunk) => {
        ensureOpen();
        if (written === 0 && chunk.length > 0 && chunk[0] !== IMAGE_MAGIC) throw new OtaOpError('ESP_ERR_OTA_VALIDATE_FAILED', `OTA image has invalid magic byte (expected 0xE9, saw 0x${chunk[0]!.toString(16).padStart(2, '0')})`);
        if (written + chunk.length > size) throw new OtaOpError('ESP_ERR_INVALID_SIZE', `more than the ${size} bytes announced`);
        this.flash.program(target.offset + written, chunk);
        written += chunk.length;
      },
      finish: () => {
        ensureOpen();
        open = false;
        const read = (offset: number, length: number) => this.flash.read(target.offset + offset, Math.max(0, Math.min(length, written - offset)));
        const check = verifyAppImage(read, { expectedChipId: this.chip.imageChipId, address: target.offset, partitionSize: target.size });
        if (!check.ok) throw new OtaOpError('ESP_ERR_OTA_VALIDATE_FAILED', check.problems.map((p) => p.message).join('; '));
        const two = this.store.read();
        const active = activeOtadata(two);
        const next: 0 | 1 = active === -1 ? 0 : active === 0 ? 1 : 0;
        const seq = nextSeqFor(this.slots.indexOf(target), this.slots.length, active === -1 ? null : two[active].seq);
        this.store.write(next, { seq, state: OTA_IMG_STATE.new, label: two[next].label });
      },
      abort: () => {
        open = false;
      },
    };
  }
}
