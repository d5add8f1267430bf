/*
 * The natives of the SDK's `preference` module (files/preference/preference.js, unchanged; on the chip
 * esp32/modPreference.c over ESP-IDF's NVS) on a virtual chip: NVS is the chip's Node side, in the
 * flash image's nvs partition (firmware/virtual-esp32/nvs.ts). The values and the messages are
 * modPreference.c's: a boolean, a 32-bit integer (a whole number), a string or an ArrayBuffer; get of
 * a missing key answers undefined.
 */
#include "fw_host.h"
#include <string.h>

enum { kNone = 0, kBoolean, kInteger, kString, kBlob };

void xs_preference_set(xsMachine *the)
{
	fwOut out = {0};
	int32_t kind, integer = 0;
	const char *string = "";
	void *data = NULL;
	xsUnsignedValue length = 0;

	switch (xsmcTypeOf(xsArg(2))) {
		case xsBooleanType:
			kind = kBoolean;
			integer = xsmcToBoolean(xsArg(2));
			break;
		case xsIntegerType:
			kind = kInteger;
			integer = xsmcToInteger(xsArg(2));
			break;
		case xsNumberType: {
			double number = xsmcToNumber(xsArg(2));
			if (number != (int)number)
				xsUnknownError("float unsupported");
			kind = kInteger;
			integer = (int)number;
			} break;
		case xsStringType:
			kind = kString;
			string = xsmcToString(xsArg(2));
			break;
		case xsReferenceType:
			if (xsmcIsInstanceOf(xsArg(2), xsArrayBufferPrototype)) {
				kind = kBlob;
				xsmcGetBufferReadable(xsArg(2), &data, &length);
				break;
			}
			/* fall through */
		default:
			xsUnknownError("unsupported type");
	}
	fwOutString(&out, xsmcToString(xsArg(0)));
	fwOutString(&out, xsmcToString(xsArg(1)));
	fwOutInt(&out, kind);
	fwOutInt(&out, integer);
	fwOutString(&out, string);
	fwOutBytes(&out, data, (uint32_t)length);
	/* NVS writes a 32-byte entry and the value's own entries (fw_host_flash_time.c). */
	fwFlashProgramTime(32 + (uint32_t)length + (uint32_t)strlen(string));
	fwCall(the, FW_CALL_NVS_SET, &out, NULL);
}

void xs_preference_get(xsMachine *the)
{
	fwOut out = {0};
	fwIn in;
	uint32_t n;
	fwOutString(&out, xsmcToString(xsArg(0)));
	fwOutString(&out, xsmcToString(xsArg(1)));
	fwCall(the, FW_CALL_NVS_GET, &out, &in);
	int32_t kind = fwInInt(&in);
	int32_t integer = fwInInt(&in);
	const char *string = fwInString(&in);
	const uint8_t *blob = fwInBytes(&in, &n);
	if (kBoolean == kind)
		xsmcSetBoolean(xsResult, integer);
	else if (kInteger == kind)
		xsmcSetInteger(xsResult, integer);
	else if (kString == kind)
		xsmcSetString(xsResult, (char *)string);
	else if (kBlob == kind)
		xsmcSetArrayBuffer(xsResult, (void *)blob, n);
	else
		xsmcSetUndefined(xsResult);
}

void xs_preference_delete(xsMachine *the)
{
	fwOut out = {0};
	fwOutString(&out, xsmcToString(xsArg(0)));
	fwOutString(&out, xsmcToString(xsArg(1)));
	fwFlashProgramTime(32); /* the entry's state bits */
	fwCall(the, FW_CALL_NVS_DELETE, &out, NULL);
}

void xs_preference_keys(xsMachine *the)
{
	fwOut out = {0};
	fwIn in;
	int i = 0;
	fwOutString(&out, xsmcToString(xsArg(0)));
	fwCall(the, FW_CALL_NVS_KEYS, &out, &in);
	const char *keys = fwInString(&in);
	xsmcVars(1);
	xsmcSetNewArray(xsResult, 0);
	while (*keys) {
		const char *end = strchr(keys, '\n');
		size_t length = end ? (size_t)(end - keys) : strlen(keys);
		xsVar(0) = xsStringBuffer((char *)keys, (xsIntegerValue)length);
		xsmcSetIndex(xsResult, i++, xsVar(0));
		keys += length + (end ? 1 : 0);
	}
}
