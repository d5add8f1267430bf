/*
 * The SoftAP's associated stations, for hal/radio.ts and the SoftAP listener (hal/http-server.ts).
 *
 * ESP-IDF (esp_wifi.h, esp_netif.h):
 * - esp_wifi_ap_get_sta_list: the stations associated now (Moddable's "station_connect" report
 *   carries no MAC, so hal/radio.ts compares lists);
 * - esp_netif_dhcps_get_clients_by_mac on "WIFI_AP_DEF": the IPv4 lease of each MAC, to tell which
 *   station owns a request's remote address (a connection knows only its peer's IP);
 * - esp_wifi_ap_get_sta_aid + esp_wifi_deauth_sta: deauthenticate one station.
 */
#include "xsmc.h"
#include "xsHost.h"
#include "esp_wifi.h"
#include "esp_netif.h"

static int apStations(wifi_sta_list_t *list)
{
	c_memset(list, 0, sizeof(*list));
	if (ESP_OK != esp_wifi_ap_get_sta_list(list))
		return 0;		/* not in AP mode: no stations */
	return list->num;
}

void xs_fw_wifi_stations(xsMachine *the)
{
	wifi_sta_list_t list;
	int count = apStations(&list), i;
	uint8_t *out;

	xsmcSetArrayBuffer(xsResult, NULL, count * 6);
	out = xsmcToArrayBuffer(xsResult);
	for (i = 0; i < count; i++)
		c_memcpy(out + (i * 6), list.sta[i].mac, 6);
}

void xs_fw_wifi_station_for_address(xsMachine *the)
{
	wifi_sta_list_t list;
	esp_netif_pair_mac_ip_t pairs[ESP_WIFI_MAX_CONN_NUM];
	esp_ip4_addr_t address;
	esp_netif_t *ap = esp_netif_get_handle_from_ifkey("WIFI_AP_DEF");
	int count = apStations(&list), i;

	if (!ap || !count || (ESP_OK != esp_netif_str_to_ip4(xsmcToString(xsArg(0)), &address)))
		return;		/* undefined */
	c_memset(pairs, 0, sizeof(pairs));
	for (i = 0; i < count; i++)
		c_memcpy(pairs[i].mac, list.sta[i].mac, 6);
	if (ESP_OK != esp_netif_dhcps_get_clients_by_mac(ap, count, pairs))
		return;
	for (i = 0; i < count; i++) {
		if (pairs[i].ip.addr == address.addr) {
			xsmcSetArrayBuffer(xsResult, pairs[i].mac, 6);
			return;
		}
	}
}

void xs_fw_wifi_deauth_station(xsMachine *the)
{
	uint8_t mac[6];
	void *data;
	xsUnsignedValue length;
	uint16_t aid;

	xsmcGetBufferReadable(xsArg(0), &data, &length);
	if (sizeof(mac) != length)
		xsRangeError("a MAC is 6 bytes");
	c_memcpy(mac, data, sizeof(mac));
	if (ESP_OK != esp_wifi_ap_get_sta_aid(mac, &aid)) {
		xsmcSetBoolean(xsResult, 0);
		return;
	}
	xsmcSetBoolean(xsResult, ESP_OK == esp_wifi_deauth_sta(aid));
}
