/*
 * The app slots of a virtual chip: the natives of the SDK's `ota` module (build/devices/esp32/modules/
 * ota/ota.js, unchanged; ota.c on the chip) and of the platform's own (native/fw_ota.c: the running
 * and last invalid slots, marking the running image valid, why an image would be refused). esp_ota_ops on the virtual flash is the
 * chip's Node side (its OTA slots, otadata and the bootloader's checks).
 */
#include "fw_host.h"

typedef struct {
	uint8_t open;
} fwOtaRecord;

void xs_ota_destructor(void *data)
{
	fwOtaRecord *ota = data;
	if (ota) {
		if (ota->open)
			fwCall(NULL, FW_CALL_OTA_CANCEL, NULL, NULL);
		c_free(ota);
	}
}

void xs_ota(xsMachine *the)
{
	fwOtaRecord *ota = c_calloc(1, sizeof(fwOtaRecord));
	if (NULL == ota)
		xsUnknownError("no memory");
	xsmcSetHostData(xsThis, ota);
	if (fwCall(NULL, FW_CALL_OTA_BEGIN, NULL, NULL))
		xsUnknownError("begin failed");
	ota->open = 1;
}

void xs_ota_write(xsMachine *the)
{
	fwOtaRecord *ota = xsmcGetHostData(xsThis);
	void *data;
	xsUnsignedValue size;
	fwOut out = {0};
	if (!ota || !ota->open)
		xsUnknownError("write failed");
	xsmcGetBufferReadable(xsArg(0), &data, &size);
	/* OTA_WITH_SEQUENTIAL_WRITES: each sector is erased as the image reaches it (fw_host_flash_time.c). */
	fwFlashProgramTime((uint32_t)size);
	fwOutBytes(&out, data, (uint32_t)size);
	if (fwCall(NULL, FW_CALL_OTA_WRITE, &out, NULL))
		xsUnknownError("write failed");
}

void xs_ota_cancel(xsMachine *the)
{
	fwOtaRecord *ota = xsmcGetHostData(xsThis);
	if (!ota || !ota->open)
		return;
	fwCall(NULL, FW_CALL_OTA_CANCEL, NULL, NULL);
	ota->open = 0;
}

void xs_ota_complete(xsMachine *the)
{
	fwOtaRecord *ota = xsmcGetHostData(xsThis);
	if (!ota || !ota->open)
		xsUnknownError("bad state");
	ota->open = 0;
	/* esp_ota_set_boot_partition: an otadata sector erased and an entry written. */
	fwFlashProgramTime(4096);
	if (fwCall(NULL, FW_CALL_OTA_COMPLETE, NULL, NULL))
		xsUnknownError("end failed");
}

/*
 * Why esp_ota_end (the Secure Boot v2 signature) or esp_ota_set_boot_partition (anti-rollback) would
 * refuse the image written so far: [code, message], or undefined. The chip knows (its open handle);
 * fw_ota.c asks ESP-IDF and the eFuses on a real ESP32-S3.
 */
void xs_fw_ota_refusal(xsMachine *the)
{
	fwOut out = {0};
	fwIn in;
	const char *code;
	fwOutInt(&out, xsmcToInteger(xsArg(0)));
	fwCall(the, FW_CALL_OTA_REFUSAL, &out, &in);
	code = fwInString(&in);
	if (!code[0])
		return;
	xsmcVars(1);
	xsmcSetNewArray(xsResult, 2);
	xsmcSetString(xsVar(0), (char *)code);
	xsmcSetIndex(xsResult, 0, xsVar(0));
	xsmcSetString(xsVar(0), (char *)fwInString(&in));
	xsmcSetIndex(xsResult, 1, xsVar(0));
}

/* [partition, version, project name, state, secure_version] */
static void answerApp(xsMachine *the, fwIn *in)
{
	int i;
	xsmcVars(1);
	xsmcSetNewArray(xsResult, 5);
	for (i = 0; i < 4; i++) {
		xsmcSetString(xsVar(0), (char *)fwInString(in));
		xsmcSetIndex(xsResult, i, xsVar(0));
	}
	xsmcSetInteger(xsVar(0), fwInInt(in));
	xsmcSetIndex(xsResult, 4, xsVar(0));
}

/* esp_ota_get_next_update_partition(NULL)->size */
void xs_fw_ota_slot_bytes(xsMachine *the)
{
	fwIn in;
	fwCall(the, FW_CALL_OTA_SLOT_BYTES, NULL, &in);
	xsmcSetInteger(xsResult, fwInInt(&in));
}

void xs_fw_ota_running_app(xsMachine *the)
{
	fwIn in;
	fwCall(the, FW_CALL_OTA_RUNNING_APP, NULL, &in);
	answerApp(the, &in);
}

void xs_fw_ota_last_invalid_app(xsMachine *the)
{
	fwIn in;
	fwCall(the, FW_CALL_OTA_LAST_INVALID_APP, NULL, &in);
	if (fwInBool(&in))
		answerApp(the, &in);
}

void xs_fw_ota_mark_valid(xsMachine *the)
{
	fwIn in;
	int marked;
	fwCall(the, FW_CALL_OTA_MARK_VALID, NULL, &in);
	marked = fwInBool(&in);
	if (marked)
		fwFlashProgramTime(4096); /* otadata rewritten, as esp_ota_set_boot_partition does */
	xsmcSetBoolean(xsResult, marked);
}
