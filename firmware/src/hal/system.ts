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
}

export interface System {
  identity(): DeviceIdentity;
  /** Never returns on a board. */
  reboot(reason: string): void;
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
}

export interface Mqtt {
  connect(options: MqttOptions): Promise<{ publish(topic: string, payload: Uint8Array): Promise<void>; close(): Promise<void> }>;
}
