/// <reference path="../native/native.d.ts" />
// The Fuse HAL: HMAC-SHA256 computed by the ESP32-S3's HMAC peripheral with the eFuse key of purpose
// HMAC_UP (native/fw_fuse.c, esp_hmac_calculate; the key block is the manifest's
// defines.fuse.hmac_key). The key never enters the firmware: not even C reads it (DESIGN.md section 2).
import type { Fuse } from '../../../hal/fuse.ts';

const fuseHmac = native('xs_fw_fuse_hmac');

export const efuseHmac: Fuse = Object.freeze({
  hmac: (message) => new Uint8Array(fuseHmac(message)),
});
