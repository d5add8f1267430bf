// The ESP32 `ota` module (build/devices/esp32/modules/ota: ota.js, ota.c): the constructor opens the
// passive slot (esp_ota_get_next_update_partition + esp_ota_begin with OTA_SIZE_UNKNOWN, which
// erases it), `write` is esp_ota_write, `complete` is esp_ota_end (verifies the image) +
// esp_ota_set_boot_partition, `cancel` is esp_ota_end without switching. Each throws when ESP-IDF
// refuses. The host's esp_ota_ops work on the board's flash image (firmware/virtual-esp32/ota-slots.ts).
import { bytesOf, hostCall } from '../host.ts';

export default class OTA {
  #open = true;

  constructor() {
    hostCall('ota.begin', {});
  }

  write(data: ArrayBuffer | ArrayBufferView): void {
    if (!this.#open) throw new Error('ota closed');
    hostCall('ota.write', {}, bytesOf(data));
  }

  cancel(): void {
    if (!this.#open) return;
    this.#open = false;
    hostCall('ota.abort');
  }

  complete(): void {
    if (!this.#open) throw new Error('ota closed');
    this.#open = false;
    hostCall('ota.finish');
  }
}
