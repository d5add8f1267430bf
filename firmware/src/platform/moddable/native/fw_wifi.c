/*
 * Wi-Fi settings Moddable's `wifi` module has no API for, for hal/radio.ts.
 *
 * ESP-IDF (esp_wifi.h, esp_mac.h, esp_netif.h):
 * - esp_wifi_set_max_tx_power(int8_t): units of 0.25 dBm, [8, 84] = 2 to 20 dBm, quantized by the
 *   PHY; ESP_ERR_WIFI_NOT_STARTED before esp_wifi_start, hence the boolean;
 * - esp_wifi_set_mac(WIFI_IF_STA, mac): only while the interface is stopped, never equal to the
 *   SoftAP's MAC, bit 0 of the first byte clear (unicast). Before Wi-Fi exists,
 *   esp_iface_mac_addr_set(mac, ESP_MAC_WIFI_STA) makes esp_wifi_init use it. The override lasts
 *   until reboot (spec 3.6 step 2): nothing is written to NVS (Moddable sets WIFI_STORAGE_RAM);
 * - esp_wifi_get_config / esp_wifi_set_config(WIFI_IF_AP): WIFI_AUTH_WPA2_PSK with the CCMP pairwise
 *   cipher, replacing the WPA/WPA2 mixed mode WiFi.accessPoint starts (spec 2.5);
 * - esp_netif_get_ip_info on "WIFI_STA_DEF": the station's gateway, the AP a client joined;
 * - esp_wifi_sta_get_ap_info: the associated AP's RSSI, for the heartbeat (docs/device-health.md).
 */
#include "xsmc.h"
#include "xsHost.h"
#include "esp_wifi.h"
#include "esp_mac.h"
#include "esp_netif.h"

#define kMinQuarterDbm (8)
#define kMaxQuarterDbm (84)

void xs_fw_wifi_set_tx_power(xsMachine *the)
{
	int quarterDbm = xsmcToInteger(xsArg(0));
	esp_err_t err;

	if ((quarterDbm < kMinQuarterDbm) || (quarterDbm > kMaxQuarterDbm))
		xsRangeError("TX power must be 8 to 84 quarter-dBm");
	err = esp_wifi_set_max_tx_power((int8_t)quarterDbm);
	if ((ESP_ERR_WIFI_NOT_STARTED == err) || (ESP_ERR_WIFI_NOT_INIT == err)) {
		xsmcSetBoolean(xsResult, 0);
		return;
	}
	if (ESP_OK != err)
		xsUnknownError("esp_wifi_set_max_tx_power failed");
	xsmcSetBoolean(xsResult, 1);
}

void xs_fw_wifi_set_station_mac(xsMachine *the)
{
	uint8_t mac[6], softAp[6];
	void *data;
	xsUnsignedValue length;
	wifi_mode_t mode = WIFI_MODE_NULL;
	esp_err_t err;

	xsmcGetBufferReadable(xsArg(0), &data, &length);
	if (sizeof(mac) != length)
		xsRangeError("a MAC is 6 bytes");
	c_memcpy(mac, data, sizeof(mac));
	if (mac[0] & 0x01)
		xsRangeError("a station MAC must be unicast (bit 0 of the first byte clear)");
	if ((ESP_OK == esp_read_mac(softAp, ESP_MAC_WIFI_SOFTAP)) && (0 == c_memcmp(mac, softAp, sizeof(mac))))
		xsRangeError("the station MAC must differ from the SoftAP's");

	err = esp_wifi_get_mode(&mode);
	if (ESP_ERR_WIFI_NOT_INIT == err) {
		if (ESP_OK != esp_iface_mac_addr_set(mac, ESP_MAC_WIFI_STA))
			xsUnknownError("esp_iface_mac_addr_set failed");
		return;
	}
	if (ESP_OK != err)
		xsUnknownError("esp_wifi_get_mode failed");
	/* The station interface must exist and be stopped while its MAC changes. */
	esp_wifi_disconnect();
	esp_wifi_stop();
	if ((WIFI_MODE_STA != mode) && (WIFI_MODE_APSTA != mode))
		esp_wifi_set_mode((WIFI_MODE_AP == mode) ? WIFI_MODE_APSTA : WIFI_MODE_STA);
	err = esp_wifi_set_mac(WIFI_IF_STA, mac);
	if (ESP_OK != esp_wifi_start())
		xsUnknownError("esp_wifi_start failed after the MAC change");
	if (ESP_OK != err)
		xsUnknownError("esp_wifi_set_mac failed");
}

void xs_fw_wifi_softap_wpa2_only(xsMachine *the)
{
	wifi_config_t config;

	if (ESP_OK != esp_wifi_get_config(WIFI_IF_AP, &config))
		xsUnknownError("esp_wifi_get_config failed: is the SoftAP up?");
	config.ap.authmode = WIFI_AUTH_WPA2_PSK;
	config.ap.pairwise_cipher = WIFI_CIPHER_TYPE_CCMP;
	if (ESP_OK != esp_wifi_set_config(WIFI_IF_AP, &config))
		xsUnknownError("esp_wifi_set_config failed");
}

/* esp_wifi_sta_get_ap_info: the associated AP's RSSI in dBm, or undefined while not associated. */
void xs_fw_wifi_station_rssi(xsMachine *the)
{
	wifi_ap_record_t ap;

	if (ESP_OK == esp_wifi_sta_get_ap_info(&ap))
		xsmcSetInteger(xsResult, ap.rssi);
}

void xs_fw_wifi_station_gateway(xsMachine *the)
{
	esp_netif_t *station = esp_netif_get_handle_from_ifkey("WIFI_STA_DEF");
	esp_netif_ip_info_t info;
	char text[16];

	if (!station || (ESP_OK != esp_netif_get_ip_info(station, &info)) || (0 == info.gw.addr))
		return;		/* undefined: no lease */
	esp_ip4addr_ntoa(&info.gw, text, sizeof(text));
	xsmcSetString(xsResult, text);
}
