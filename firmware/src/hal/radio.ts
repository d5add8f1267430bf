// Wi-Fi radio: the SoftAP used by provisioning mode and the station used by clients and by a target
// controller. TX power is in dBm (spec 3.2: about 2 dBm in provisioning).

export interface ScanResult {
  ssid: string;
  bssid: string;
  channel: number;
  rssiDbm: number;
}

export interface SoftApConfig {
  ssid: string;
  password: string;
  txPowerDbm: number;
  maxStations: number;
}

export interface Association {
  /** Base URL of the AP's HTTP listener as seen from this station (e.g. http://192.168.4.1). */
  gatewayUrl: string;
}

export interface Radio {
  /** The SoftAP interface's MAC (its BSSID), known before the AP starts. */
  softApBssid(): string;
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
}
