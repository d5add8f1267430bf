// The ESP32-S3's interface MACs, derived from the factory base MAC in eFuse BLOCK1 (the Wi-Fi
// station's): ESP-IDF's esp_mac.c with CONFIG_ESP32S3_UNIVERSAL_MAC_ADDRESSES_FOUR (the default)
// gives the four interfaces universally administered addresses by adding 0, 1, 2 and 3 to the base
// MAC's final octet (ESP-IDF's Kconfig help: "to the final octet of the base MAC"), so the octet
// wraps and nothing carries into the one before it. One rule for the emulator's radio, the bench
// and the serial boards alike.

/** What each interface adds to the base MAC's final octet. */
export const MAC_OFFSETS = Object.freeze({ station: 0, softAp: 1, bluetooth: 2, ethernet: 3 });
export type MacInterface = keyof typeof MAC_OFFSETS;

/** "24:0A:C4:10:31:01" as six bytes; throws on anything else. */
export function macBytes(mac: string): Uint8Array {
  const parts = mac.split(':');
  if (parts.length !== 6 || parts.some((p) => !/^[0-9A-Fa-f]{2}$/.test(p))) throw new Error(`not a MAC address: ${JSON.stringify(mac)}`);
  return Uint8Array.from(parts, (p) => parseInt(p, 16));
}

/** Six bytes as "24:0A:C4:10:31:01" (upper case, as esptool prints them). */
export function macString(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
}

/** The MAC of an interface, from the base (station) MAC. */
export function interfaceMac(base: string, iface: MacInterface): string {
  const bytes = macBytes(base);
  bytes[5] = (bytes[5]! + MAC_OFFSETS[iface]) & 0xff;
  return macString(bytes);
}

/** The SoftAP's MAC (its BSSID): the station MAC with 1 added to its final octet. */
export function softApMac(stationMac: string): string {
  return interfaceMac(stationMac, 'softAp');
}
