// What @moddable/typings 5.6.0 lacks: the ESP32 OTA module. Mirrors
// build/devices/esp32/modules/ota/ota.js and ota.c of the Moddable SDK (8.2.3): the constructor calls
// esp_ota_get_next_update_partition + esp_ota_begin (sequential writes), `write` calls
// esp_ota_write, `complete` calls esp_ota_end + esp_ota_set_boot_partition, `cancel` esp_ota_end.
// Each throws (xsUnknownError) when ESP-IDF refuses.
declare module 'ota' {
  export default class OTA {
    constructor();
    /** Any buffer: ota.c reads it with xsmcGetBufferReadable. */
    write(data: ArrayBuffer | Uint8Array): void;
    cancel(): void;
    complete(): void;
  }
}
