// What the board is and what it can do to itself.

export type Role = 'controller' | 'client';
export type BuildKind = 'production' | 'debug';

export interface DeviceIdentity {
  uuid: string;
  role: Role;
  /** Controllers have Ethernet; clients are Wi-Fi only. */
  ethernetMac?: string;
  wifiMac: string;
  hardwareClass: string;
  productHex: string;
  /** The running image's version, from its esp_app_desc_t (runningApp().version): never a setting. */
  firmwareVersion: string;
  build: BuildKind;
}

/** Writes an image into the passive OTA slot (ESP-IDF esp_ota_begin/esp_ota_write/esp_ota_end). */
export interface OtaWriter {
  write(chunk: Uint8Array): void;
  /**
   * Verifies the image in the slot as the bootloader will (checksum, SHA-256, chip: esp_ota_end)
   * and makes it the one the next boot runs (esp_ota_set_boot_partition); it then boots in
   * PENDING_VERIFY. Throws when the image is invalid; the running image stays selected. When the
   * chip's security refuses it, the error carries `code`: 'signature_invalid' (its Secure Boot v2
   * signature does not verify with the keys the chip trusts) or 'secure_version_too_low'
   * (anti-rollback), and the message says why (docs/secure-boot.md).
   */
  finish(): void;
  abort(): void;
}

/** An app slot as esp_ota_get_partition_description and esp_ota_get_state_partition describe it. */
export interface AppSlotInfo {
  /** The partition's label (ota_0, ota_1). */
  partition: string;
  /** From the image's esp_app_desc_t. */
  version: string;
  projectName: string;
  /** esp_ota_img_states_t by name: new, pending_verify, valid, invalid, aborted, undefined. */
  state: string;
  /** The image's esp_app_desc_t secure_version (anti-rollback). */
  secureVersion: number;
}

/** Why the firmware's last run ended (docs/device-health.md, "boot"), and what a crash was, named in hal/reasons.ts. */
import type { CrashKind, ResetReason } from './reasons.ts';
export type { CrashKind, ResetReason };

/** What the chip kept of a crash across the reset (RTC no-init memory on an ESP32-S3). */
export interface CrashSummary {
  kind: CrashKind;
  message: string;
  /** The module and line XS knew, if it did. */
  where?: string;
}

export interface LastRun {
  reason: ResetReason;
  /** For a software reset: who asked (`console`, `ota <version>`, `provisioned`, ...). */
  by?: string;
  crash?: CrashSummary;
}

/** The heaps as a heartbeat reports them (docs/device-health.md, "heartbeat"). */
export interface HeapReport {
  /** XS's chunk heap in use, and its peak since the previous report (bytes). */
  chunk: number;
  chunkPeak: number;
  /** XS's slot heap in use, and its peak since the previous report (slots). */
  slots: number;
  slotsPeak: number;
  /** The chip's own heap: its largest free block, and the lowest it went since boot (bytes). */
  largestFreeBlock: number;
  minFreeHeap: number;
}

export interface System {
  identity(): DeviceIdentity;
  /** Never returns on a board. `reason` (who asked) is kept across the reset: the next boot's lastRun().by. */
  reboot(reason: string): void;
  /** Why the last run ended, as the chip kept it across the reset; the same answer for the whole run. */
  lastRun(): LastRun;
  /** The heaps now, the peaks since the previous call (which starts them again). */
  heapReport(): HeapReport;
  /** The passive OTA slot's size in bytes (esp_ota_get_next_update_partition): no larger image fits. */
  otaSlotBytes(): number;
  /** Starts writing the passive OTA slot (the one after the running image); throws while the running image is unconfirmed. */
  otaBegin(size: number): OtaWriter;
  /** The image running now (esp_ota_get_running_partition). */
  runningApp(): AppSlotInfo;
  /** The newest image that was rolled back or marked invalid (esp_ota_get_last_invalid_partition), if any. */
  lastInvalidApp(): AppSlotInfo | null;
  /**
   * The running image works (esp_ota_mark_app_valid_cancel_rollback): a PENDING_VERIFY image becomes
   * VALID, so a later reset no longer rolls it back. True when the state changed.
   */
  markAppValid(): boolean;
}

export interface MqttOptions {
  host: string;
  port: number;
  clientId: string;
  username?: string;
  password?: string;
  /** PEM CA certificate: TLS when present. */
  ca?: string;
  /** The last will: published by the broker, retained, when the session ends without a DISCONNECT. */
  will?: { topic: string; payload: Uint8Array };
}

export interface Mqtt {
  connect(options: MqttOptions): Promise<{ publish(topic: string, payload: Uint8Array, flags?: { retain?: boolean }): Promise<void>; close(): Promise<void> }>;
}
