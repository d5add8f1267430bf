/* Written from firmware/virtual-esp32/chip-calls.ts (npx tsx firmware/virtual-esp32/chip-calls.ts --write): do not edit. */
#ifndef __FW_HOST_CALLS_H__
#define __FW_HOST_CALLS_H__

#define FW_CALL_FUSE_HMAC 1 /* (bytes) -> (bytes) */
#define FW_CALL_MAC_ADDRESS 2 /* (string) -> (bytes) */
#define FW_CALL_RESTART 3 /* (string) -> () */
#define FW_CALL_NET_GET 4 /* (string, string) -> (bool, string) */
#define FW_CALL_SOCKET_ROUTE 5 /* (int, string, int) -> (string, string, int) */
#define FW_CALL_SOCKET_LISTEN_PORT 7 /* (string) -> (int) */
#define FW_CALL_SOCKET_LISTENING 6 /* (string, int) -> () */
#define FW_CALL_SOCKET_UNLISTENED 8 /* (string) -> () */
#define FW_CALL_WIFI_SET_MODE 10 /* (int) -> () */
#define FW_CALL_WIFI_GET_MODE 11 /* () -> (int) */
#define FW_CALL_WIFI_SCAN 12 /* () -> () */
#define FW_CALL_WIFI_SCAN_STOP 13 /* () -> () */
#define FW_CALL_WIFI_CONNECT 14 /* (string, string, bytes) -> () */
#define FW_CALL_WIFI_DISCONNECT 15 /* () -> () */
#define FW_CALL_WIFI_ACCESS_POINT 16 /* (string, string, int, bool, int, bool) -> () */
#define FW_CALL_WIFI_SET_TX_POWER 17 /* (int) -> (bool) */
#define FW_CALL_WIFI_SET_STATION_MAC 18 /* (bytes) -> () */
#define FW_CALL_WIFI_SOFT_AP_WPA2_ONLY 19 /* () -> () */
#define FW_CALL_WIFI_STATION_GATEWAY 20 /* () -> (bool, string) */
#define FW_CALL_WIFI_STATIONS 21 /* () -> (bytes) */
#define FW_CALL_WIFI_STATION_FOR_ADDRESS 22 /* (string) -> (bool, bytes) */
#define FW_CALL_WIFI_DEAUTH 23 /* (bytes) -> (bool) */
#define FW_CALL_WIFI_STATION_RSSI 24 /* () -> (bool, int) */
#define FW_CALL_ETHERNET_START 30 /* () -> () */
#define FW_CALL_ETHERNET_USE_DHCP 31 /* () -> () */
#define FW_CALL_ETHERNET_USE_STATIC_IP 32 /* (string, string, string) -> () */
#define FW_CALL_OTA_BEGIN 40 /* () -> () */
#define FW_CALL_OTA_WRITE 41 /* (bytes) -> () */
#define FW_CALL_OTA_CANCEL 42 /* () -> () */
#define FW_CALL_OTA_COMPLETE 43 /* () -> () */
#define FW_CALL_OTA_RUNNING_APP 44 /* () -> (string, string, string, string, int) */
#define FW_CALL_OTA_LAST_INVALID_APP 45 /* () -> (bool, string, string, string, string, int) */
#define FW_CALL_OTA_MARK_VALID 46 /* () -> (bool) */
#define FW_CALL_OTA_REFUSAL 47 /* (int) -> (string, string) */
#define FW_CALL_OTA_SLOT_BYTES 48 /* () -> (int) */
#define FW_CALL_I2C_WRITE 50 /* (int, bytes, bool) -> (int) */
#define FW_CALL_I2C_READ 51 /* (int, int) -> (int, bytes) */
#define FW_CALL_NVS_GET 55 /* (string, string) -> (int, int, string, bytes) */
#define FW_CALL_NVS_SET 56 /* (string, string, int, int, string, bytes) -> () */
#define FW_CALL_NVS_DELETE 57 /* (string, string) -> () */
#define FW_CALL_NVS_KEYS 58 /* (string) -> (string) */
#define FW_CALL_FLASH_OP 65 /* (string, string, int) -> (int) */
#define FW_CALL_LAST_RUN 70 /* () -> (string, string, string, string, string) */
#define FW_CALL_NOTE_CRASH 71 /* (string, string, string) -> () */
#define FW_CALL_PONG 60 /* (int, int, int, int, int, int, int, int, int) -> () */

#define FW_EVENT_WIFI_NOTIFY 1 /* (string, int) */
#define FW_EVENT_WIFI_SCAN_RESULT 2 /* (string, bytes, int, int, string) */
#define FW_EVENT_WIFI_SCAN_DONE 3 /* () */
#define FW_EVENT_ETHERNET_NOTIFY 4 /* (string) */
#define FW_EVENT_PING 5 /* (int, bool, bool) */

#endif
