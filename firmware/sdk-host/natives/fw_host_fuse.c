/*
 * The eFuse HMAC of a virtual chip (native/fw_fuse.c on the chip: esp_hmac_calculate with the key
 * block of purpose HMAC_UP). The key lives in the chip's eFuses, on the Node side: neither this
 * process nor XS ever holds it (DESIGN.md section 2).
 */
#include "fw_host.h"

void xs_fw_fuse_hmac(xsMachine *the)
{
	void *message;
	xsUnsignedValue length;
	fwOut out = {0};
	fwIn in;
	uint32_t n;

	xsmcGetBufferReadable(xsArg(0), &message, &length);
	fwOutBytes(&out, message, (uint32_t)length);
	fwCall(the, FW_CALL_FUSE_HMAC, &out, &in);
	const uint8_t *mac = fwInBytes(&in, &n);
	xsmcSetArrayBuffer(xsResult, (void *)mac, n);
}
