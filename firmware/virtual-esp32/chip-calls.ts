// The one list of what passes between a virtual board's firmware (the SDK-built mc.so, its natives in
// firmware/sdk-host/natives/) and the chip beneath it (this folder): calls the natives make and wait
// for, answered in order, and events the chip raises later. Each has a number and its fields; the C
// side's numbers are firmware/sdk-host/natives/fw_host_calls.h, written from this list by
// `npx tsx firmware/virtual-esp32/chip-calls.ts --write` and checked against it by a test.
// Wire format: firmware/sdk-host/natives/fw_host.h.

export type Field = 'int' | 'bool' | 'bytes' | 'string';

interface CallSpec {
  readonly id: number;
  readonly args: readonly Field[];
  readonly result: readonly Field[];
  readonly doc: string;
}

interface EventSpec {
  readonly id: number;
  readonly fields: readonly Field[];
  readonly doc: string;
}

export const CHIP_CALLS = {
  fuseHmac: { id: 1, args: ['bytes'], result: ['bytes'], doc: 'esp_hmac_calculate with the eFuse key of purpose HMAC_UP: HMAC-SHA256 of the message' },
  macAddress: { id: 2, args: ['string'], result: ['bytes'], doc: 'esp_read_mac: base, station, softap or ethernet' },
  restart: { id: 3, args: ['string'], result: [], doc: 'esp_restart, with who asked (kept in RTC memory: the next boot\'s lastRun)' },
  netGet: { id: 4, args: ['string', 'string'], result: ['bool', 'string'], doc: 'Net.get(what, interface): present, value' },
  socketRoute: { id: 5, args: ['int', 'string', 'int'], result: ['string', 'string', 'int'], doc: 'a TCP connect (0) or UDP send (1) to address:port: the source address it leaves from, and where the virtual network delivers it' },
  socketListenPort: { id: 7, args: ['string'], result: ['int'], doc: 'the port a listener on the address binds instead of 80: the one it had before a restart, or 0 (any)' },
  socketListening: { id: 6, args: ['string', 'int'], result: [], doc: 'a listener of the firmware is bound: its address and the port it got for port 80' },
  socketUnlistened: { id: 8, args: ['string'], result: [], doc: 'a listener of the firmware is closed (an interface went down): its address' },
  wifiSetMode: { id: 10, args: ['int'], result: [], doc: 'esp_wifi_set_mode: 0 none, 1 station, 2 AP, 3 both' },
  wifiGetMode: { id: 11, args: [], result: ['int'], doc: 'esp_wifi_get_mode' },
  wifiScan: { id: 12, args: [], result: [], doc: 'esp_wifi_scan_start: results come as wifiScanResult events, then wifiScanDone' },
  wifiScanStop: { id: 13, args: [], result: [], doc: 'esp_wifi_scan_stop' },
  wifiConnect: { id: 14, args: ['string', 'string', 'bytes'], result: [], doc: 'esp_wifi_connect to ssid with password (bssid: 6 bytes or none); reports come as events' },
  wifiDisconnect: { id: 15, args: [], result: [], doc: 'esp_wifi_disconnect, the station credentials cleared' },
  wifiAccessPoint: { id: 16, args: ['string', 'string', 'int', 'bool', 'int', 'bool'], result: [], doc: 'the SoftAP: ssid, password (empty: open), channel, hidden, max stations, keep the station' },
  wifiSetTxPower: { id: 17, args: ['int'], result: ['bool'], doc: 'esp_wifi_set_max_tx_power in 0.25 dBm: false while Wi-Fi is stopped' },
  wifiSetStationMac: { id: 18, args: ['bytes'], result: [], doc: 'esp_wifi_set_mac(WIFI_IF_STA)' },
  wifiSoftApWpa2Only: { id: 19, args: [], result: [], doc: 'esp_wifi_set_config(WIFI_IF_AP) with WIFI_AUTH_WPA2_PSK' },
  wifiStationGateway: { id: 20, args: [], result: ['bool', 'string'], doc: "the station interface's gateway" },
  wifiStations: { id: 21, args: [], result: ['bytes'], doc: 'esp_wifi_ap_get_sta_list: 6 bytes per station' },
  wifiStationForAddress: { id: 22, args: ['string'], result: ['bool', 'bytes'], doc: "the associated station whose DHCP lease is the address" },
  wifiDeauth: { id: 23, args: ['bytes'], result: ['bool'], doc: 'esp_wifi_deauth_sta' },
  wifiStationRssi: { id: 24, args: [], result: ['bool', 'int'], doc: "esp_wifi_sta_get_ap_info: associated, and the AP's RSSI in dBm" },
  ethernetStart: { id: 30, args: [], result: [], doc: 'the W5500 started: reports come as events' },
  ethernetUseDhcp: { id: 31, args: [], result: [], doc: 'esp_netif_dhcpc_start' },
  ethernetUseStaticIp: { id: 32, args: ['string', 'string', 'string'], result: [], doc: 'esp_netif_set_ip_info: address, netmask, gateway' },
  otaBegin: { id: 40, args: [], result: [], doc: 'esp_ota_begin on the next update partition, OTA_WITH_SEQUENTIAL_WRITES' },
  otaWrite: { id: 41, args: ['bytes'], result: [], doc: 'esp_ota_write' },
  otaCancel: { id: 42, args: [], result: [], doc: 'esp_ota_end without setting the boot partition' },
  otaComplete: { id: 43, args: [], result: [], doc: 'esp_ota_end (validates the image) and esp_ota_set_boot_partition' },
  otaRunningApp: { id: 44, args: [], result: ['string', 'string', 'string', 'string', 'int'], doc: 'the running slot: partition label, version, project name, state, secure_version' },
  otaLastInvalidApp: { id: 45, args: [], result: ['bool', 'string', 'string', 'string', 'string', 'int'], doc: 'esp_ota_get_last_invalid_partition: present, then as otaRunningApp' },
  otaMarkValid: { id: 46, args: [], result: ['bool'], doc: 'esp_ota_mark_app_valid_cancel_rollback: true when the slot was PENDING_VERIFY (with anti-rollback, SECURE_VERSION is raised to its secure_version)' },
  otaRefusal: { id: 47, args: ['int'], result: ['string', 'string'], doc: "before otaComplete, with the bytes written: why esp_ota_end (the Secure Boot v2 signature) or esp_ota_set_boot_partition (anti-rollback) would refuse the image: '' when they would not, else signature_invalid or secure_version_too_low, and why" },
  otaSlotBytes: { id: 48, args: [], result: ['int'], doc: 'esp_ota_get_next_update_partition: the passive slot\'s size in bytes' },
  i2cWrite: { id: 50, args: ['int', 'bytes', 'bool'], result: ['int'], doc: 'an I2C write to the 7-bit address (stop condition or not): 0, or the error' },
  i2cRead: { id: 51, args: ['int', 'int'], result: ['int', 'bytes'], doc: 'an I2C read of length bytes: 0 and the bytes, or the error' },
  nvsGet: { id: 55, args: ['string', 'string'], result: ['int', 'int', 'string', 'bytes'], doc: "nvs_get_* of a namespace's key: its kind (0 none, 1 boolean, 2 integer, 3 string, 4 blob), then the integer (or boolean), string or blob" },
  nvsSet: { id: 56, args: ['string', 'string', 'int', 'int', 'string', 'bytes'], result: [], doc: 'nvs_set_* and nvs_commit: namespace, key, kind as nvsGet answers it, and its value' },
  nvsDelete: { id: 57, args: ['string', 'string'], result: [], doc: 'nvs_erase_key and nvs_commit (a missing key is no error)' },
  nvsKeys: { id: 58, args: ['string'], result: ['string'], doc: "the namespace's keys (nvs_entry_find), separated by newlines" },
  flashOp: { id: 65, args: ['string', 'string', 'int'], result: ['int'], doc: "a power-cut trial's watch on the file system (natives/fw_host_flash.c), before an operation that changes it: create, write, delete, rename, mkdir or rmdir (then cut), its path, a write's length; -1 lets it happen, 0 or more lets that many bytes of a write through; the power is cut by killing the firmware unanswered" },
  lastRun: { id: 70, args: [], result: ['string', 'string', 'string', 'string', 'string'], doc: "esp_reset_reason and what RTC memory kept: why the last run ended (power_on, software, watchdog, abort, panic, brownout, deep_sleep, unknown), who asked a software reset, and a crash's kind, message and where ('' when none)" },
  noteCrash: { id: 71, args: ['string', 'string', 'string'], result: [], doc: "the firmware's abort hook, before XS aborts: a crash's kind, message and where, kept in RTC memory across the reset" },
  pong: { id: 60, args: ['int', 'int', 'int', 'int', 'int', 'int', 'int', 'int', 'int'], result: [], doc: "the answer to a ping: its sequence, then the chunk heap's current, peak and maximum bytes, the slot heap's current, peak and maximum slots, and the JavaScript stack's peak and size in slots" },
} as const satisfies Record<string, CallSpec>;

export const CHIP_EVENTS = {
  wifiNotify: { id: 1, fields: ['string', 'int'], doc: "a Wi-Fi monitor's message (connect, disconnect with its reason, gotIP, lostIP, station_connect, station_disconnect)" },
  wifiScanResult: { id: 2, fields: ['string', 'bytes', 'int', 'int', 'string'], doc: 'one access point of a scan: ssid, bssid, rssi, channel, authentication' },
  wifiScanDone: { id: 3, fields: [], doc: 'the scan has ended' },
  ethernetNotify: { id: 4, fields: ['string'], doc: "an Ethernet monitor's message (start, connect, disconnect, gotIP)" },
  ping: { id: 5, fields: ['int', 'bool', 'bool'], doc: 'the watchdog and the heap probe: sequence, collect garbage first, reset the peaks after' },
} as const satisfies Record<string, EventSpec>;

export type ChipCallName = keyof typeof CHIP_CALLS;
export type ChipEventName = keyof typeof CHIP_EVENTS;

type FieldType<F extends Field> = F extends 'int' ? number : F extends 'bool' ? boolean : F extends 'bytes' ? Uint8Array : string;
export type FieldTuple<T extends readonly Field[]> = { -readonly [K in keyof T]: T[K] extends Field ? FieldType<T[K]> : never };

/** What the chip's side implements: one method per call, taking its fields and answering its result's. */
export type ChipCallHandlers = {
  [N in ChipCallName]: (...args: FieldTuple<(typeof CHIP_CALLS)[N]['args']>) => FieldTuple<(typeof CHIP_CALLS)[N]['result']> | Promise<FieldTuple<(typeof CHIP_CALLS)[N]['result']>>;
};

export type ChipEventFields<N extends ChipEventName> = FieldTuple<(typeof CHIP_EVENTS)[N]['fields']>;

const cName = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** fw_host_calls.h: the numbers of this list, for the natives. */
export function cHeader(): string {
  const lines = [
    '/* Written from firmware/virtual-esp32/chip-calls.ts (npx tsx firmware/virtual-esp32/chip-calls.ts --write): do not edit. */',
    '#ifndef __FW_HOST_CALLS_H__',
    '#define __FW_HOST_CALLS_H__',
    '',
  ];
  for (const [name, spec] of Object.entries(CHIP_CALLS)) lines.push(`#define FW_CALL_${cName(name)} ${spec.id} /* (${spec.args.join(', ')}) -> (${spec.result.join(', ')}) */`);
  lines.push('');
  for (const [name, spec] of Object.entries(CHIP_EVENTS)) lines.push(`#define FW_EVENT_${cName(name)} ${spec.id} /* (${spec.fields.join(', ')}) */`);
  lines.push('', '#endif', '');
  return lines.join('\n');
}

export const C_HEADER_PATH = new URL('../sdk-host/natives/fw_host_calls.h', import.meta.url);

if (process.argv.includes('--write')) {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(C_HEADER_PATH, cHeader());
}
