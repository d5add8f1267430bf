/*
 * The platform's Wi-Fi natives (native/fw_wifi.c and fw_wifi_stations.c on the chip: TX power, the
 * station MAC, WPA2-only, the station's gateway, the SoftAP's stations and deauthentication) on a
 * virtual chip: the driver's answers come from the chip's Node side.
 */
#include "fw_host.h"

static void answerBytes(xsMachine *the, fwIn *in)
{
	uint32_t n;
	const uint8_t *bytes = fwInBytes(in, &n);
	xsmcSetArrayBuffer(xsResult, (void *)bytes, n);
}

static void outBuffer(xsMachine *the, fwOut *out, xsSlot *slot)
{
	void *data;
	xsUnsignedValue length;
	xsmcGetBufferReadable(*slot, &data, &length);
	fwOutBytes(out, data, (uint32_t)length);
}

void xs_fw_wifi_set_tx_power(xsMachine *the)
{
	fwOut out = {0};
	fwIn in;
	fwOutInt(&out, xsmcToInteger(xsArg(0)));
	fwCall(the, FW_CALL_WIFI_SET_TX_POWER, &out, &in);
	xsmcSetBoolean(xsResult, fwInBool(&in));
}

void xs_fw_wifi_set_station_mac(xsMachine *the)
{
	fwOut out = {0};
	outBuffer(the, &out, &xsArg(0));
	fwCall(the, FW_CALL_WIFI_SET_STATION_MAC, &out, NULL);
}

void xs_fw_wifi_softap_wpa2_only(xsMachine *the)
{
	fwCall(the, FW_CALL_WIFI_SOFT_AP_WPA2_ONLY, NULL, NULL);
}

void xs_fw_wifi_station_gateway(xsMachine *the)
{
	fwIn in;
	fwCall(the, FW_CALL_WIFI_STATION_GATEWAY, NULL, &in);
	if (fwInBool(&in))
		xsmcSetString(xsResult, (char *)fwInString(&in));
}

/* esp_wifi_sta_get_ap_info: the associated AP's RSSI, or undefined. */
void xs_fw_wifi_station_rssi(xsMachine *the)
{
	fwIn in;
	fwCall(the, FW_CALL_WIFI_STATION_RSSI, NULL, &in);
	if (fwInBool(&in))
		xsmcSetInteger(xsResult, fwInInt(&in));
}

void xs_fw_wifi_stations(xsMachine *the)
{
	fwIn in;
	fwCall(the, FW_CALL_WIFI_STATIONS, NULL, &in);
	answerBytes(the, &in);
}

void xs_fw_wifi_station_for_address(xsMachine *the)
{
	fwOut out = {0};
	fwIn in;
	fwOutString(&out, xsmcToString(xsArg(0)));
	fwCall(the, FW_CALL_WIFI_STATION_FOR_ADDRESS, &out, &in);
	if (fwInBool(&in))
		answerBytes(the, &in);
}

void xs_fw_wifi_deauth_station(xsMachine *the)
{
	fwOut out = {0};
	fwIn in;
	outBuffer(the, &out, &xsArg(0));
	fwCall(the, FW_CALL_WIFI_DEAUTH, &out, &in);
	xsmcSetBoolean(xsResult, fwInBool(&in));
}
