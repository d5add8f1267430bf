/*
 * The eFuse key as an HMAC oracle (DESIGN.md section 2), for hal/fuse.ts.
 *
 * ESP-IDF: esp_hmac_calculate(hmac_key_id_t, message, length, out[32]) (esp_hmac.h, component
 * esp_security; esp_hw_support before ESP-IDF 5.3) runs the HMAC peripheral of the ESP32-S3/C3/C6
 * in upstream mode with the key of eFuse block BLOCK_KEY<n> (HMAC_KEY<n>). The key must have been
 * burned with purpose HMAC_UP and is read-protected: neither JavaScript nor this C ever sees it.
 * The block comes from the manifest: defines.fuse.hmac_key -> MODDEF_FUSE_HMAC_KEY.
 */
#include "xsmc.h"
#include "xsHost.h"
#include "mc.defines.h"
#include "esp_hmac.h"

#ifndef MODDEF_FUSE_HMAC_KEY
	#error "the manifest must name the eFuse key block: defines.fuse.hmac_key (0 to 5)"
#endif
#if (MODDEF_FUSE_HMAC_KEY < 0) || (MODDEF_FUSE_HMAC_KEY > 5)
	#error "defines.fuse.hmac_key must be 0 to 5 (BLOCK_KEY0 to BLOCK_KEY5)"
#endif

#define kHmacBytes (32)

void xs_fw_fuse_hmac(xsMachine *the)
{
	void *message;
	xsUnsignedValue length;
	uint8_t hmac[kHmacBytes];
	esp_err_t err;

	/* The message pointer is into the XS heap: nothing may allocate until the peripheral has read it. */
	xsmcGetBufferReadable(xsArg(0), &message, &length);
	err = esp_hmac_calculate((hmac_key_id_t)(HMAC_KEY0 + MODDEF_FUSE_HMAC_KEY), message, length, hmac);
	if (ESP_OK != err)
		xsUnknownError("eFuse HMAC failed: is the key block burned with purpose HMAC_UP?");
	xsmcSetArrayBuffer(xsResult, hmac, kHmacBytes);
}
