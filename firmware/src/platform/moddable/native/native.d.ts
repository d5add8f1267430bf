// The native (C) functions of this platform, as TypeScript sees them. XS's `native(name)` (xsc
// compiles a call with one string literal into a host function: Moddable SDK
// documentation/xs/XS in C.md, "Native") binds each one; its C definition is
// `void <name>(xsMachine *the)` in the fw_*.c file named beside it. test/firmware/moddable-manifest.test.ts
// checks that every name declared here has that definition. Buffers may be any buffer XS's
// xsmcGetBufferReadable accepts; results are fresh ArrayBuffers.

/** A host object that owns one PSA operation; its destructor aborts and frees it. */
interface PsaOperation {
  readonly __psaOperation: 'PsaOperation';
}

type NativeBytes = ArrayBuffer | Uint8Array;

// fw_fuse.c: esp_hmac_calculate with the eFuse key block the manifest names (defines.fuse.hmac_key).
declare function native(name: 'xs_fw_fuse_hmac'): (message: NativeBytes) => ArrayBuffer;

// fw_wifi.c: what Moddable's `wifi` module has no API for.
/** esp_wifi_set_max_tx_power in 0.25 dBm units; false when Wi-Fi is not started yet. */
declare function native(name: 'xs_fw_wifi_set_tx_power'): (quarterDbm: number) => boolean;
/** esp_wifi_set_mac(WIFI_IF_STA) (stopping Wi-Fi around it), or esp_iface_mac_addr_set before Wi-Fi starts. */
declare function native(name: 'xs_fw_wifi_set_station_mac'): (mac: NativeBytes) => void;
/** esp_wifi_set_config(WIFI_IF_AP): WIFI_AUTH_WPA2_PSK with CCMP, keeping the rest of the AP config. */
declare function native(name: 'xs_fw_wifi_softap_wpa2_only'): () => void;
/** The station interface's gateway (esp_netif_get_ip_info), or undefined without an address. */
declare function native(name: 'xs_fw_wifi_station_gateway'): () => string | undefined;
/** esp_wifi_sta_get_ap_info: the associated AP's RSSI in dBm, or undefined. */
declare function native(name: 'xs_fw_wifi_station_rssi'): () => number | undefined;

// fw_wifi_stations.c: the SoftAP's stations.
/** esp_wifi_ap_get_sta_list: 6 bytes per associated station. */
declare function native(name: 'xs_fw_wifi_stations'): () => ArrayBuffer;
/** The associated station whose DHCP lease is `address` (esp_netif_dhcps_get_clients_by_mac). */
declare function native(name: 'xs_fw_wifi_station_for_address'): (address: string) => ArrayBuffer | undefined;
/** esp_wifi_ap_get_sta_aid + esp_wifi_deauth_sta; false when that station is not associated. */
declare function native(name: 'xs_fw_wifi_deauth_station'): (mac: NativeBytes) => boolean;

// fw_crypto_sha.c: PSA hash and MAC (the SHA accelerator through ESP-IDF's PSA driver).
declare function native(name: 'xs_fw_sha256_create'): () => PsaOperation;
declare function native(name: 'xs_fw_sha256_update'): (operation: PsaOperation, data: NativeBytes) => void;
declare function native(name: 'xs_fw_sha256_finish'): (operation: PsaOperation) => ArrayBuffer;
declare function native(name: 'xs_fw_hmac_sha256'): (key: NativeBytes, message: NativeBytes) => ArrayBuffer;

// fw_crypto_gcm.c: PSA multipart AEAD, AES-256-GCM (the AES accelerator).
declare function native(name: 'xs_fw_gcm_create'): (key: NativeBytes, iv: NativeBytes, aad: NativeBytes, encrypt: boolean) => PsaOperation;
/** Output of the same length as the input (checked in C). */
declare function native(name: 'xs_fw_gcm_update'): (operation: PsaOperation, input: NativeBytes) => ArrayBuffer;
/** Encryption: the 16-byte tag. */
declare function native(name: 'xs_fw_gcm_finish'): (operation: PsaOperation) => ArrayBuffer;
/** Decryption: whether the tag verifies (psa_aead_verify). */
declare function native(name: 'xs_fw_gcm_verify'): (operation: PsaOperation, tag: NativeBytes) => boolean;

// fw_crypto_p256.c: deterministic ECDSA P-256 and the public key, through PSA.
/** psa_sign_message with PSA_ALG_DETERMINISTIC_ECDSA(PSA_ALG_SHA_256): r || s, 64 bytes. */
declare function native(name: 'xs_fw_p256_sign'): (privateKey: NativeBytes, message: NativeBytes) => ArrayBuffer;
/** psa_export_public_key: 0x04 || X || Y, 65 bytes. */
declare function native(name: 'xs_fw_p256_public_key'): (privateKey: NativeBytes) => ArrayBuffer;

// fw_crypto_random.c: the hardware RNG (esp_fill_random).
declare function native(name: 'xs_fw_random'): (length: number) => ArrayBuffer;

// fw_system.c: restart, factory MACs, why the last run ended, the heaps.
/** esp_restart, `by` (who asked) kept in RTC no-init memory for the next boot's xs_fw_last_run. */
declare function native(name: 'xs_fw_restart'): (by: string) => never;
/** esp_reset_reason and the RTC record: [reason, by, crash kind, crash message, crash where] ('' where none); the same for the whole run. */
declare function native(name: 'xs_fw_last_run'): () => [string, string, string, string, string];
/** The abort hook (main.ts): a crash's kind, message and where, into RTC memory, allocating nothing. */
declare function native(name: 'xs_fw_note_crash'): (kind: string, message: string, where: string) => void;
/** [chunk, chunk peak, slots, slot peak, largest free block, lowest free heap]; XS's peaks start again. */
declare function native(name: 'xs_fw_heap'): () => [number, number, number, number, number, number];
/** esp_read_mac for one interface. */
declare function native(name: 'xs_fw_mac_address'): (kind: 'base' | 'station' | 'softap' | 'ethernet') => ArrayBuffer;

// fw_ota.c: the app slots (app_update: esp_ota_ops.h) for what Moddable's `ota` module lacks.
/** [partition label, version, project name, state, secure_version]: the slot running now (esp_ota_get_running_partition). */
declare function native(name: 'xs_fw_ota_running_app'): () => [string, string, string, string, number];
/** The same for esp_ota_get_last_invalid_partition, or undefined when there is none. */
declare function native(name: 'xs_fw_ota_last_invalid_app'): () => [string, string, string, string, number] | undefined;
/** esp_ota_get_next_update_partition(NULL)->size: the passive slot's bytes. */
declare function native(name: 'xs_fw_ota_slot_bytes'): () => number;
/** esp_ota_mark_app_valid_cancel_rollback when the running slot is PENDING_VERIFY; true when it was. */
declare function native(name: 'xs_fw_ota_mark_valid'): () => boolean;
/**
 * Before the SDK's ota.complete(), with the bytes written: why esp_ota_end (the Secure Boot v2
 * signature) or esp_ota_set_boot_partition (anti-rollback) would refuse the image in the passive
 * slot, as [code, message] (signature_invalid, secure_version_too_low); undefined when they would not.
 */
declare function native(name: 'xs_fw_ota_refusal'): (written: number) => [string, string] | undefined;
