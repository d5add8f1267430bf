// The app side of OTA on a virtual board: ESP-IDF's esp_ota_ops (components/app_update) over the
// board's flash, with app rollback enabled. The firmware reaches it through the HAL (system.otaBegin,
// runningApp, lastInvalidApp, markAppValid); errors carry ESP-IDF's names.
//   begin   esp_ota_get_next_update_partition + esp_ota_begin: the slot after the running one, erased;
//           refused while the running image is still PENDING_VERIFY (ESP_ERR_OTA_ROLLBACK_INVALID_STATE)
//   write   esp_ota_write: sequential, the first byte must be the image magic
//   finish  esp_ota_end (esp_image_verify of the slot; with signed apps, its Secure Boot v2
//           signature: esp_secure_boot_verify_signature) + esp_ota_set_boot_partition (with
//           anti-rollback, refused below the eFuse SECURE_VERSION; otadata: the next seq for that
//           slot, state NEW; the bootloader makes it PENDING_VERIFY at the next boot)
//   markValid  esp_ota_mark_app_valid_cancel_rollback (with anti-rollback, SECURE_VERSION is raised
//           to the running app's secure_version)
// The signature and anti-rollback checks are docs/secure-boot.md, "The OTA client".
import { appDescriptorOfImage, APP_DESC_BYTES, APP_DESC_IMAGE_OFFSET } from '../image/app-desc.ts';
import { IMAGE_MAGIC, verifyAppImage, type ImageCheck } from '../image/app-image.ts';
import type { ChipSpec } from '../image/chips.ts';
import { activeOtadata, OTA_IMG_STATE, seqValid, stateName, type OtaSelectEntry } from '../image/otadata.ts';
import { findPartition, otaSlots, PARTITION_TYPES, type PartitionEntry } from '../image/partition-table.ts';
import { readSignatureSector, signatureSectorOffset, SIG_SECTOR_BYTES, verifySignedImage, type TrustedKey, type VerifyFailure } from '../image/secure-boot.ts';
import type { Efuses } from './efuse.ts';
import { FLASH_SECTOR_BYTES, type FlashImage } from './flash-image.ts';
import { OtadataStore } from './otadata-store.ts';

export interface AppSlotInfo {
  partition: string;
  version: string;
  projectName: string;
  /** esp_ota_img_states_t by name; 'undefined' when otadata has no entry for the slot. */
  state: string;
  /** esp_app_desc_t.secure_version. */
  secureVersion: number;
}

export class OtaOpError extends Error {
  override name = 'OtaOpError';
  constructor(
    readonly code:
      | 'ESP_ERR_INVALID_SIZE'
      | 'ESP_ERR_OTA_VALIDATE_FAILED'
      | 'ESP_ERR_OTA_SMALL_SEC_VER'
      | 'ESP_ERR_OTA_ROLLBACK_INVALID_STATE'
      | 'ESP_ERR_OTA_PARTITION_CONFLICT'
      | 'ESP_ERR_NOT_FOUND'
      | 'ESP_ERR_INVALID_STATE',
    /** What ESP-IDF logs (ESP_LOGE) when it returns the code. */
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

/** The chip's security settings esp_ota_ops heeds (docs/secure-boot.md). */
export interface OtaSecurity {
  /**
   * The chip's eFuses: with SECURE_BOOT_EN, a new image must be signed by a key whose digest is
   * burned and not revoked; SECURE_VERSION for anti-rollback. Without them (or with secure boot off),
   * the keys trusted are the running image's own (CONFIG_SECURE_SIGNED_ON_UPDATE_NO_SECURE_BOOT).
   */
  efuses?: Efuses;
  /** CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK: the app's secure_version against the eFuse SECURE_VERSION. Default off. */
  antiRollback?: boolean;
}

/** Why esp_ota_end or esp_ota_set_boot_partition refuses an image the slot verified as an app image. */
export interface OtaRefusal {
  /** What the firmware reports (core/ota/client.ts OtaError). */
  code: 'signature_invalid' | 'secure_version_too_low';
  /** For signature_invalid: which check failed (firmware/image/secure-boot.ts). */
  reason?: VerifyFailure;
  message: string;
  /** What ESP-IDF returns for it. */
  idfError: 'ESP_ERR_OTA_VALIDATE_FAILED' | 'ESP_ERR_OTA_SMALL_SEC_VER';
}

export interface OtaUpdate {
  write(chunk: Uint8Array): void;
  /** What finish() would refuse the image written so far for (signature, anti-rollback), or null. */
  refusal(): OtaRefusal | null;
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
    private readonly security: OtaSecurity = {},
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
    return { partition: partition.name, version: desc?.version ?? '', projectName: desc?.projectName ?? '', state: this.stateOf(partition), secureVersion: desc?.secureVersion ?? 0 };
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

  /**
   * esp_ota_mark_app_valid_cancel_rollback: true when the running image was pending and is now VALID.
   * With anti-rollback, SECURE_VERSION is then raised to the running app's secure_version
   * (esp_efuse_update_secure_version): from now on no image below it boots or installs.
   */
  markValid(): boolean {
    const two = this.store.read();
    const active = activeOtadata(two);
    if (active === -1 || this.slotOf(two[active]) !== this.running || two[active].state === OTA_IMG_STATE.valid) return false;
    this.store.write(active, { ...two[active], state: OTA_IMG_STATE.valid });
    const efuses = this.security.efuses;
    if (this.security.antiRollback && efuses) {
      const desc = appDescriptorOfImage(this.flash.read(this.running.offset, APP_DESC_IMAGE_OFFSET + APP_DESC_BYTES));
      if (desc && desc.secureVersion > efuses.secureVersion) {
        try {
          efuses.burnSecureVersion(desc.secureVersion);
        } catch (err) {
          throw new OtaOpError('ESP_ERR_INVALID_STATE', `anti-rollback: SECURE_VERSION cannot be raised to ${desc.secureVersion}: ${(err as Error).message}`);
        }
      }
    }
    return true;
  }

  /**
   * The keys esp_secure_boot_verify_sbv2_signature_block trusts for a new image, or null when the
   * chip checks no signature (secure boot off and the running image unsigned: no signed-apps build).
   * Secure boot on: the SECURE_BOOT_DIGESTn eFuse blocks, with their revocation bits. Off: the key of
   * the running image's first sound signature block, and only the new image's first block is
   * checked against it (ESP-IDF with CONFIG_SECURE_SIGNED_ON_UPDATE_NO_SECURE_BOOT).
   */
  private trustedKeys(): { keys: TrustedKey[]; source: string; firstBlockOnly: boolean } | null {
    const efuses = this.security.efuses;
    if (efuses?.secureBootEnabled) return { keys: efuses.secureBootKeys(), source: 'the eFuse key digests (SECURE_BOOT_EN)', firstBlockOnly: false };
    const read = (offset: number, length: number) => this.flash.read(this.running.offset + offset, Math.max(0, Math.min(length, this.running.size - offset)));
    const check = verifyAppImage(read, { expectedChipId: this.chip.imageChipId, address: this.running.offset, partitionSize: this.running.size });
    if (!check.ok) return null;
    const sector = readSignatureSector(read(signatureSectorOffset(check.length), SIG_SECTOR_BYTES), 0);
    const first = sector?.blocks.find((b) => b.problem === undefined);
    return first ? { keys: [{ digest: first.keyDigest }], source: `the running image's signature (key ${first.keyDigest})`, firstBlockOnly: true } : null;
  }

  /**
   * What esp_ota_end (the signature) and esp_ota_set_boot_partition (anti-rollback) refuse an app
   * image for, once esp_image_verify has passed it (`check`, read through `read`).
   */
  private refusalOf(read: (offset: number, length: number) => Uint8Array, check: ImageCheck): OtaRefusal | null {
    const trusted = this.trustedKeys();
    if (trusted) {
      const verdict = verifySignedImage(read, signatureSectorOffset(check.length), trusted.keys);
      let failure = verdict.failure;
      if (verdict.ok && trusted.firstBlockOnly && verdict.signedBy!.block !== 0) {
        const block0 = verdict.blocks[0]!;
        failure = { kind: 'untrusted', message: `signature block 0 is signed by key ${block0.keyDigest}; without secure boot only the first block counts` };
      }
      if (failure) return { code: 'signature_invalid', reason: failure.kind, message: `Secure Boot V2 verification failed (${failure.kind}): ${failure.message}; the keys trusted are ${trusted.source}`, idfError: 'ESP_ERR_OTA_VALIDATE_FAILED' };
    }
    const efuses = this.security.efuses;
    if (this.security.antiRollback && efuses) {
      const version = check.appDescriptor?.secureVersion ?? 0;
      if (version < efuses.secureVersion) {
        return {
          code: 'secure_version_too_low',
          message: `the image's secure_version ${version} is below the eFuse SECURE_VERSION ${efuses.secureVersion}: this partition can not be booted (anti-rollback), it will not be set as boot`,
          idfError: 'ESP_ERR_OTA_SMALL_SEC_VER',
        };
      }
    }
    return null;
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
    // The image as written so far, verified once (esp_image_verify, then the signature and
    // anti-rollback): refusal() asks before finish(), and finish() takes the same answer.
    let judged: { written: number; check: ImageCheck; refusal: OtaRefusal | null } | undefined;
    const judge = () => {
      if (judged?.written !== written) {
        const read = (offset: number, length: number) => this.flash.read(target.offset + offset, Math.max(0, Math.min(length, written - offset)));
        const check = verifyAppImage(read, { expectedChipId: this.chip.imageChipId, address: target.offset, partitionSize: target.size });
        // A refused image is esp_image_verify's, with its own reasons.
        judged = { written, check, refusal: check.ok ? this.refusalOf(read, check) : null };
      }
      return judged;
    };
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
      refusal: () => {
        ensureOpen();
        return judge().refusal;
      },
      finish: () => {
        ensureOpen();
        open = false;
        const { check, refusal } = judge();
        if (!check.ok) throw new OtaOpError('ESP_ERR_OTA_VALIDATE_FAILED', check.problems.map((p) => p.message).join('; '));
        // The boot slot stays as it is: otadata is not written.
        if (refusal) throw new OtaOpError(refusal.idfError, refusal.message);
        this.store.selectNew(this.slots.indexOf(target), this.slots.length);
      },
      abort: () => {
        open = false;
      },
    };
  }
}
