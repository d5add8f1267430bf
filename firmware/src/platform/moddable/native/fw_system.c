/*
 * The chip itself, for hal/system.ts and hal/radio.ts.
 *
 * ESP-IDF: esp_restart (esp_system.h); esp_read_mac (esp_mac.h) with ESP_MAC_BASE (the factory MAC
 * in eFuse BLK0, unique per chip), ESP_MAC_WIFI_STA, ESP_MAC_WIFI_SOFTAP (the SoftAP's BSSID, known
 * before the AP starts: Net.get("MAC", "ap") answers only while it is up) and ESP_MAC_ETH (the MAC
 * the W5500 is given: it has none of its own).
 */
#include "xsmc.h"
#include "xsHost.h"
#include "esp_system.h"
#include "esp_mac.h"

void xs_fw_restart(xsMachine *the)
{
	esp_restart();
}

void xs_fw_mac_address(xsMachine *the)
{
	const char *kind = xsmcToString(xsArg(0));
	esp_mac_type_t type = ESP_MAC_BASE;
	uint8_t mac[6];

	if (0 == c_strcmp(kind, "base"))
		type = ESP_MAC_BASE;
	else if (0 == c_strcmp(kind, "station"))
		type = ESP_MAC_WIFI_STA;
	else if (0 == c_strcmp(kind, "softap"))
		type = ESP_MAC_WIFI_SOFTAP;
	else if (0 == c_strcmp(kind, "ethernet"))
		type = ESP_MAC_ETH;
	else
		xsRangeError("MAC kind: base, station, softap or ethernet");
	if (ESP_OK != esp_read_mac(mac, type))
		xsUnknownError("esp_read_mac failed");
	xsmcSetArrayBuffer(xsResult, mac, sizeof(mac));
}
