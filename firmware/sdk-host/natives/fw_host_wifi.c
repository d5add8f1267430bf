/*
 * The natives of the SDK's `wifi` module (modules/network/wifi/esp32/wifi.js, unchanged) on a virtual
 * chip. What xs6wifi.c checks and throws, and the shape of what it reports, are kept: the dictionary
 * checks with the same messages, one scan at a time whose access points come as objects {ssid, rssi,
 * channel, hidden, bssid, authentication} and then null, monitors called with "connect",
 * "disconnect" (with the reason: -1 when the 4-way handshake failed), "gotIP", "lostIP",
 * "station_connect", "station_disconnect". What esp_wifi does beneath (the radio, association, the
 * SoftAP, DHCP) is the chip's Node side, on the virtual air.
 */
#include "fw_host.h"
#include "mc.xs.h"
#include <string.h>

typedef struct fwWiFiRecord fwWiFiRecord;
typedef fwWiFiRecord *fwWiFi;

struct fwWiFiRecord {
	fwWiFi next;
	xsSlot obj;
	uint8_t haveCallback;
};

static fwWiFi gMonitors = NULL;
static xsSlot gScanCallback;
static uint8_t gScanning = 0;

static void call(xsMachine *the, uint16_t call, fwOut *out)
{
	fwCall(the, call, out, NULL);
}

void xs_wifi_set_mode(xsMachine *the)
{
	int mode = xsmcToInteger(xsArg(0));
	fwOut out = {0};
	if ((mode < -5) || ((mode > -5) && (mode < 0)) || (mode > 3))
		xsUnknownError("invalid mode");
	fwOutInt(&out, mode);
	call(the, FW_CALL_WIFI_SET_MODE, &out);
}

void xs_wifi_get_mode(xsMachine *the)
{
	fwIn in;
	fwCall(the, FW_CALL_WIFI_GET_MODE, NULL, &in);
	xsmcSetInteger(xsResult, fwInInt(&in));
}

static void endScan(xsMachine *the)
{
	if (!gScanning) return;
	gScanning = 0;
	xsForget(gScanCallback);
}

void xs_wifi_scan(xsMachine *the)
{
	if (0 == xsmcArgc) {
		if (gScanning) {
			endScan(the);
			call(the, FW_CALL_WIFI_SCAN_STOP, NULL);
		}
		return;
	}
	if (gScanning)
		xsUnknownError("already scanning");
	if ((xsmcArgc < 2) || (xsReferenceType != xsmcTypeOf(xsArg(0))))
		xsUnknownError("invalid");
	if (fwCall(NULL, FW_CALL_WIFI_SCAN, NULL, NULL))
		xsUnknownError("scan request failed");
	gScanCallback = xsArg(1);
	xsRemember(gScanCallback);
	gScanning = 1;
}

static void onScanResult(xsMachine *the, fwIn *fields)
{
	uint32_t n;
	if (!gScanning) return;
	const char *ssid = fwInString(fields);
	const uint8_t *bssid = fwInBytes(fields, &n);
	int32_t rssi = fwInInt(fields);
	int32_t channel = fwInInt(fields);
	const char *authentication = fwInString(fields);
	xsBeginHost(the);
	{
		xsmcVars(2);
		xsTry {
			xsmcSetNewObject(xsVar(1));
			xsmcSetString(xsVar(0), (char *)ssid);
			xsmcSet(xsVar(1), xsID_ssid, xsVar(0));
			xsmcSetInteger(xsVar(0), rssi);
			xsmcSet(xsVar(1), xsID_rssi, xsVar(0));
			xsmcSetInteger(xsVar(0), channel);
			xsmcSet(xsVar(1), xsID_channel, xsVar(0));
			xsmcSetBoolean(xsVar(0), 0);
			xsmcSet(xsVar(1), xsID_hidden, xsVar(0));
			xsmcSetArrayBuffer(xsVar(0), (void *)bssid, n);
			xsmcSet(xsVar(1), xsID_bssid, xsVar(0));
			xsmcSetString(xsVar(0), (char *)authentication);
			xsmcSet(xsVar(1), xsID_authentication, xsVar(0));
			xsCallFunction1(gScanCallback, xsGlobal, xsVar(1));
		}
		xsCatch {
		}
	}
	xsEndHost(the);
}

static void onScanDone(xsMachine *the, fwIn *fields)
{
	if (!gScanning) return;
	xsBeginHost(the);
	{
		xsSlot callback = gScanCallback;
		endScan(the);
		xsTry {
			xsCallFunction1(callback, xsGlobal, xsNull);
		}
		xsCatch {
		}
	}
	xsEndHost(the);
}

static const char *optionalString(xsMachine *the, xsIdentifier id, uint32_t max, const char *tooLong)
{
	xsmcVars(1);
	xsmcGet(xsVar(0), xsArg(0), id);
	if (!xsmcTest(xsVar(0)))
		return "";
	const char *string = xsmcToString(xsVar(0));
	if (strlen(string) > max)
		xsUnknownError("%s", tooLong);
	return string;
}

void xs_wifi_connect(xsMachine *the)
{
	fwOut out = {0};
	uint8_t bssid[6];
	uint32_t bssidLength = 0;

	if (0 == xsmcArgc) {
		call(the, FW_CALL_WIFI_DISCONNECT, NULL);
		return;
	}
	xsmcVars(2);
	xsmcGet(xsVar(1), xsArg(0), xsID_ssid);
	if (!xsmcTest(xsVar(1)))
		xsUnknownError("ssid required");
	if (strlen(xsmcToString(xsVar(1))) > 32)
		xsUnknownError("ssid too long - 32 bytes max");
	const char *password = optionalString(the, xsID_password, 64, "password too long - 64 bytes max");
	if (xsmcHas(xsArg(0), xsID_bssid)) {
		xsmcGet(xsVar(0), xsArg(0), xsID_bssid);
		if (sizeof(bssid) != xsmcGetArrayBufferLength(xsVar(0)))
			xsUnknownError("bssid must be 6 bytes");
		xsmcGetArrayBufferData(xsVar(0), 0, bssid, sizeof(bssid));
		bssidLength = sizeof(bssid);
	}
	if (xsmcHas(xsArg(0), xsID_channel)) {
		xsmcGet(xsVar(0), xsArg(0), xsID_channel);
		int channel = xsmcToInteger(xsVar(0));
		if ((channel < 1) || (channel > 13))
			xsUnknownError("invalid channel");
	}
	fwOutString(&out, xsmcToString(xsVar(1)));
	fwOutString(&out, password);
	fwOutBytes(&out, bssid, bssidLength);
	if (fwCall(NULL, FW_CALL_WIFI_CONNECT, &out, NULL))
		xsUnknownError("esp_wifi_connect failed");
}

void xs_wifi_accessPoint(xsMachine *the)
{
	fwOut out = {0};
	int channel = 1, max = 4;
	xsBooleanValue hidden = 0, station = 0;
	const char *password = "";

	xsmcVars(2);
	xsmcGet(xsVar(1), xsArg(0), xsID_ssid);
	if (strlen(xsmcToString(xsVar(1))) > 32)
		xsUnknownError("ssid too long - 32 bytes max");
	if (xsmcHas(xsArg(0), xsID_password)) {
		xsmcGet(xsVar(0), xsArg(0), xsID_password);
		password = xsmcToString(xsVar(0));
		if (strlen(password) > 64)
			xsUnknownError("password too long - 64 bytes max");
		if (strlen(password) < 8)
			xsUnknownError("password too short - 8 bytes min");
	}
	if (xsmcHas(xsArg(0), xsID_channel)) {
		xsmcGet(xsVar(0), xsArg(0), xsID_channel);
		channel = xsmcToInteger(xsVar(0));
		if ((channel < 1) || (channel > 13))
			xsUnknownError("invalid channel");
	}
	if (xsmcHas(xsArg(0), xsID_hidden)) {
		xsmcGet(xsVar(0), xsArg(0), xsID_hidden);
		hidden = xsmcTest(xsVar(0));
	}
	if (xsmcHas(xsArg(0), xsID_max)) {
		xsmcGet(xsVar(0), xsArg(0), xsID_max);
		max = xsmcToInteger(xsVar(0));
	}
	if (xsmcHas(xsArg(0), xsID_station)) {
		xsmcGet(xsVar(0), xsArg(0), xsID_station);
		station = xsmcToBoolean(xsVar(0));
	}
	fwOutString(&out, xsmcToString(xsVar(1)));
	fwOutString(&out, password);
	fwOutInt(&out, channel);
	fwOutBool(&out, hidden);
	fwOutInt(&out, max);
	fwOutBool(&out, station);
	call(the, FW_CALL_WIFI_ACCESS_POINT, &out);
}

static void onNotify(xsMachine *the, fwIn *fields)
{
	const char *message = fwInString(fields);
	int32_t reason = fwInInt(fields);
	fwWiFi walker, next;
	for (walker = gMonitors; walker; walker = next) {
		next = walker->next;
		xsBeginHost(the);
		xsTry {
			if (strcmp(message, "disconnect"))
				xsCall1(walker->obj, xsID_callback, xsString((char *)message));
			else
				xsCall2(walker->obj, xsID_callback, xsString((char *)message), xsInteger(reason));
		}
		xsCatch {
		}
		xsEndHost(the);
	}
}

static void registerEvents(void)
{
	static uint8_t registered = 0;
	if (registered) return;
	registered = 1;
	fwOnEvent(FW_EVENT_WIFI_NOTIFY, onNotify);
	fwOnEvent(FW_EVENT_WIFI_SCAN_RESULT, onScanResult);
	fwOnEvent(FW_EVENT_WIFI_SCAN_DONE, onScanDone);
}

void xs_wifi_destructor(void *data)
{
	fwWiFi wifi = data, *walker;
	if (!wifi) return;
	for (walker = &gMonitors; *walker; walker = &(*walker)->next) {
		if (*walker == wifi) {
			*walker = wifi->next;
			break;
		}
	}
	c_free(wifi);
}

void xs_wifi_constructor(xsMachine *the)
{
	registerEvents();
	if (1 == xsmcArgc)
		xsCall1(xsThis, xsID_build, xsArg(0));
	else if (2 == xsmcArgc)
		xsCall2(xsThis, xsID_build, xsArg(0), xsArg(1));
}

void xs_wifi_close(xsMachine *the)
{
	fwWiFi wifi = xsmcGetHostData(xsThis);
	if (wifi) {
		if (wifi->haveCallback)
			xsForget(wifi->obj);
		xs_wifi_destructor(wifi);
		xsmcSetHostData(xsThis, NULL);
	}
}

void xs_wifi_set_onNotify(xsMachine *the)
{
	fwWiFi wifi = xsmcGetHostData(xsThis);
	registerEvents();
	if (NULL == wifi) {
		wifi = c_calloc(1, sizeof(fwWiFiRecord));
		if (!wifi)
			xsUnknownError("out of memory");
		xsmcSetHostData(xsThis, wifi);
		wifi->obj = xsThis;
	}
	else if (wifi->haveCallback) {
		xsmcDelete(xsThis, xsID_callback);
		wifi->haveCallback = 0;
		xsForget(wifi->obj);
	}
	if (!xsmcTest(xsArg(0)))
		return;
	wifi->haveCallback = 1;
	xsRemember(wifi->obj);
	fwWiFi walker;
	for (walker = gMonitors; walker && (walker != wifi); walker = walker->next)
		;
	if (!walker) {
		wifi->next = gMonitors;
		gMonitors = wifi;
	}
	xsmcSet(xsThis, xsID_callback, xsArg(0));
}
