/// <reference path="../native/native.d.ts" />
// The Radio HAL on Moddable's `wifi` module (modules/network/wifi/esp32/xs6wifi.c) and the natives of
// native/fw_wifi*.c for what it has no API for:
// - WiFi.accessPoint starts a WPA/WPA2 mixed-mode AP (xs6wifi.c: WIFI_AUTH_WPA_WPA2_PSK); spec 2.5
//   wants WPA2 with CCMP only, so the AP's auth mode is set again natively right after it is up;
// - TX power (esp_wifi_set_max_tx_power, 0.25 dBm units) fails before esp_wifi_start: it is kept and
//   applied whenever the radio has started (AP up, station connecting);
// - a "station_connect" report carries no MAC: the station list (esp_wifi_ap_get_sta_list) tells
//   which station is new;
// - Moddable changes the Wi-Fi mode only on request: a scan or a connection while only the AP runs
//   needs AP+station first (esp_wifi_scan_start / esp_wifi_connect refuse in AP-only mode).
import Timer from 'timer';
import WiFi, { type AccessPointOptions } from 'wifi';
import { softApConfigProblem, type Association, type Radio, type ScanResult, type SoftApConfig } from '../../../hal/radio.ts';
import { macBytes, macList, macText } from './buffers.ts';
import { interfaceAddress, type InterfaceAddresses } from './interfaces.ts';

const setTxPower = native('xs_fw_wifi_set_tx_power');
const setStationMac = native('xs_fw_wifi_set_station_mac');
const wpa2Only = native('xs_fw_wifi_softap_wpa2_only');
const stationGateway = native('xs_fw_wifi_station_gateway');
const stationRssi = native('xs_fw_wifi_station_rssi');
const associatedStations = native('xs_fw_wifi_stations');
const deauthStation = native('xs_fw_wifi_deauth_station');
const stationForAddress = native('xs_fw_wifi_station_for_address');
const factoryMac = native('xs_fw_mac_address');

/** esp_wifi_set_max_tx_power's range: [8, 84] quarter-dBm = 2 to 20 dBm (esp_wifi.h). */
const MIN_QUARTER_DBM = 8;
const MAX_QUARTER_DBM = 84;
/** xs6wifi.c's disconnect reason -1: the 4-way handshake failed (a wrong password). */
const PASSWORD_REJECTED = -1;

const MODE = Object.freeze({ none: 0, station: 1, accessPoint: 2, both: 3 } as const);
/**
 * The monitor's messages as xs6wifi.c sends them (wifiEventPending, ipEventPending). Spelled out:
 * @moddable/typings 5.6.0 names the statics `station_connected`/`station_disconnected`, which
 * wifi.js (esp32) calls `station_connect`/`station_disconnect`.
 */
const REPORT = Object.freeze({ gotIP: 'gotIP', lostIP: 'lostIP', disconnected: 'disconnect', stationJoined: 'station_connect', stationLeft: 'station_disconnect' } as const);

interface Connecting {
  resolve: (association: Association) => void;
  reject: (err: Error) => void;
  timer: Timer;
}

export class WiFiRadio implements Radio {
  private txPowerQuarterDbm: number | undefined;
  private accessPointUp = false;
  private stationWanted = false;
  private known = new Set<string>();
  private readonly associationHandlers: ((mac: string) => void)[] = [];
  private connecting: Connecting | undefined;
  /** Kept so that the monitor (and its callback) lives as long as the radio. */
  private readonly monitor: WiFi;

  constructor(
    private readonly addresses: InterfaceAddresses,
    private readonly log: (message: string) => void,
  ) {
    // No dictionary: a monitor only (xs6wifi.c build() connects only when given one).
    this.monitor = new WiFi(undefined, (message: string, reason?: number) => this.onWiFi(message, reason));
  }

  softApBssid(): string {
    return macText(factoryMac('softap')); // esp_read_mac(ESP_MAC_WIFI_SOFTAP): known before the AP starts
  }

  async startSoftAp(config: SoftApConfig): Promise<void> {
    const problem = softApConfigProblem(config);
    if (problem) throw new Error(problem);
    const options: AccessPointOptions & { station?: boolean } = { ssid: config.ssid, password: config.password, max: config.maxStations, station: this.stationWanted };
    WiFi.accessPoint(options);
    wpa2Only();
    this.accessPointUp = true;
    this.setTxPowerDbm(config.txPowerDbm);
    this.known = new Set(macList(associatedStations()));
    this.addresses.set('softap', interfaceAddress('ap'));
  }

  async stopSoftAp(): Promise<void> {
    if (!this.accessPointUp) return;
    this.addresses.set('softap', undefined); // closes the SoftAP listener before its netif goes
    for (const mac of macList(associatedStations())) deauthStation(macBytes(mac));
    this.accessPointUp = false;
    this.known.clear();
    WiFi.mode = this.stationWanted ? MODE.station : MODE.none;
  }

  /** The associated station that leased `address` from the SoftAP's DHCP server, if any. */
  stationAt(address: string): string | undefined {
    const mac = stationForAddress(address);
    return mac ? macText(mac) : undefined;
  }

  onStationAssociated(handler: (mac: string) => void): void {
    this.associationHandlers.push(handler);
  }

  scan(): Promise<ScanResult[]> {
    this.withStation();
    return new Promise((resolve, reject) => {
      const found: ScanResult[] = [];
      try {
        WiFi.scan({}, (item) => {
          if (!item) return resolve(found);
          // xs6wifi.c reportScan also sets `channel`, which the typings leave out.
          found.push({ ssid: item.ssid, bssid: macText(item.bssid), channel: (item as { channel?: number }).channel ?? 0, rssiDbm: item.rssi });
        });
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  setStationMac(mac: string): void {
    setStationMac(macBytes(mac));
  }

  setTxPowerDbm(dbm: number): void {
    this.txPowerQuarterDbm = Math.min(MAX_QUARTER_DBM, Math.max(MIN_QUARTER_DBM, Math.round(dbm * 4)));
    if (!setTxPower(this.txPowerQuarterDbm)) this.log(`TX power ${dbm} dBm kept until Wi-Fi starts`);
  }

  connect(options: { ssid: string; password: string; bssid?: string; timeoutMs: number }): Promise<Association> {
    this.connecting?.reject(new Error('superseded by another connection'));
    this.connecting = undefined;
    this.stationWanted = true;
    this.withStation();
    return new Promise((resolve, reject) => {
      const timer = Timer.set(() => {
        this.connecting = undefined;
        WiFi.disconnect();
        reject(new Error(`Wi-Fi: no association with ${options.ssid} within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      this.connecting = { resolve, reject, timer };
      try {
        WiFi.connect({ ssid: options.ssid, password: options.password, ...(options.bssid ? { bssid: macBytes(options.bssid).buffer as ArrayBuffer } : {}) });
        if (this.txPowerQuarterDbm !== undefined) setTxPower(this.txPowerQuarterDbm);
      } catch (err) {
        this.settle(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  async disconnect(): Promise<void> {
    this.stationWanted = false;
    this.settle(new Error('disconnected'));
    WiFi.disconnect();
    this.addresses.set('station', undefined);
  }

  stationRssi(): number | null {
    return stationRssi() ?? null;
  }

  /** Adds the station interface to the Wi-Fi mode (xs_wifi_set_mode keeps a running AP). */
  private withStation(): void {
    const mode = WiFi.mode as number;
    if (mode === MODE.accessPoint) WiFi.mode = MODE.both;
    else if (mode !== MODE.station && mode !== MODE.both) WiFi.mode = MODE.station;
  }

  private settle(outcome: Error | Association): void {
    const pending = this.connecting;
    if (!pending) return;
    this.connecting = undefined;
    Timer.clear(pending.timer);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }

  private onWiFi(message: string, reason?: number): void {
    if (message === REPORT.gotIP) {
      this.addresses.set('station', interfaceAddress('station'));
      const gateway = stationGateway();
      this.settle(gateway ? { gatewayUrl: `http://${gateway}` } : new Error('Wi-Fi: associated, but no gateway address'));
    } else if (message === REPORT.disconnected || message === REPORT.lostIP) {
      this.addresses.set('station', undefined);
      if (message === REPORT.disconnected) this.settle(new Error(reason === PASSWORD_REJECTED ? 'Wi-Fi: the password was refused' : 'Wi-Fi: the access point refused or was not found'));
    } else if (message === REPORT.stationJoined) {
      for (const mac of macList(associatedStations())) {
        if (this.known.has(mac)) continue;
        this.known.add(mac);
        for (const handler of this.associationHandlers) handler(mac);
      }
    } else if (message === REPORT.stationLeft) {
      this.known = new Set(macList(associatedStations()));
    }
  }
}
