// Wi-Fi radio: the SoftAP used by provisioning mode and the station used by clients and by a target
// controller. TX power is in dBm (spec 3.2: about 2 dBm in provisioning).

export interface ScanResult {
  ssid: string;
  bssid: string;
  channel: number;
  rssiDbm: number;
}

/**
 * The SoftAP's authentication mode. Only WPA2-Personal with CCMP (AES) exists here (spec 2.5): never
 * an open AP, never WPA1/TKIP or a WPA/WPA2 mixed mode. On an ESP32: `WIFI_AUTH_WPA2_PSK` with
 * `pairwise_cipher = WIFI_CIPHER_TYPE_CCMP` (docs/hal.md).
 */
export type SoftApAuth = 'wpa2-psk';

export interface SoftApConfig {
  ssid: string;
  auth: SoftApAuth;
  /** The WPA2 passphrase: 8 to 63 printable ASCII characters (IEEE 802.11i). */
  password: string;
  txPowerDbm: number;
  maxStations: number;
}

/**
 * What every radio (a board's, the virtual airs) refuses to start: why, or null when the
 * configuration is a WPA2-PSK (CCMP) AP with a valid SSID and passphrase. Takes unknown input, as a
 * configuration may come over a wire.
 */
export function softApConfigProblem(config: { ssid?: unknown; auth?: unknown; password?: unknown }): string | null {
  if (config.auth !== 'wpa2-psk') {
    const what = config.auth === undefined || config.auth === 'open' ? 'an open AP (no authentication mode)' : `authentication mode ${JSON.stringify(config.auth)}`;
    return `SoftAP refused: ${what}; only WPA2-PSK with CCMP ("wpa2-psk") is allowed`;
  }
  if (typeof config.ssid !== 'string' || config.ssid.length < 1 || config.ssid.length > 32) return 'SoftAP refused: the SSID must be 1 to 32 characters';
  if (typeof config.password !== 'string' || !/^[\x20-\x7e]{8,63}$/.test(config.password)) {
    return 'SoftAP refused: a WPA2 passphrase is 8 to 63 printable ASCII characters';
  }
  return null;
}

export interface Association {
  /** Base URL of the AP's HTTP listener as seen from this station (e.g. http://192.168.4.1). */
  gatewayUrl: string;
}

export interface Radio {
  /** The SoftAP interface's MAC (its BSSID), known before the AP starts. */
  softApBssid(): string;
  /** Rejects (and starts nothing) when softApConfigProblem(config) names a problem. */
  startSoftAp(config: SoftApConfig): Promise<void>;
  stopSoftAp(): Promise<void>;
  /** Called when a station associates with our SoftAP (WPA2 handshake done). */
  onStationAssociated(handler: (mac: string) => void): void;
  scan(): Promise<ScanResult[]>;
  /** Overrides the station MAC until reboot (spec 3.6 step 2). */
  setStationMac(mac: string): void;
  setTxPowerDbm(dbm: number): void;
  /** Associates as a station; rejects on a wrong password, a refusal, or the time-out. */
  connect(options: { ssid: string; password: string; bssid?: string; timeoutMs: number }): Promise<Association>;
  disconnect(): Promise<void>;
  /** The station's RSSI from the AP it is associated with, in dBm; null when it is not associated. */
  stationRssi(): number | null;
}
