// A virtual board's radios beneath ESP-IDF's Wi-Fi and Ethernet drivers: the board's Wi-Fi in the shared
// virtual air (air.ts), its W5500's link, and what the drivers report (the SDK's xs6wifi.c and
// ethernet.c turn those into their monitors' messages, firmware/sdk-host/natives/). Behaviour kept from
// the chip:
// - the SoftAP starts WPA/WPA2 mixed, which the virtual air (spec 2.5) does not admit: it is on the air
//   once the platform's native has made it WPA2-only, with the TX power set in the same turn;
// - a station associates through the air ("connect", then "gotIP"); a wrong password is a failed
//   4-way handshake (reason -1), no AP in range reason 201; the AP's board is told
//   ("station_connect", no MAC) and its station list holds the new MAC;
// - esp_wifi_set_max_tx_power fails while Wi-Fi is stopped (mode 0), as on the chip;
// - a reset or power off: the radios go quiet, the station MAC override and TX power are gone.
import { macBytes, softApMac } from '../chip/esp32s3-mac.ts';
import type { Position, VirtualAir } from './air.ts';

export interface RadioReports {
  wifi(message: string, reason?: number): void;
  scanResult(ssid: string, bssid: Uint8Array, rssi: number, channel: number, authentication: string): void;
  scanDone(): void;
  ethernet(message: string): void;
}

export interface RadioOptions {
  air?: VirtualAir;
  wifiMac: string;
  ethernetMac?: string;
  /** The station's and the SoftAP's loopback addresses. */
  stationAddress: string;
  position: () => Position;
  /** The board's SoftAP listener URL, once bound (its stations' gateway). */
  softApUrl: () => string | undefined;
  reports: RadioReports;
}

/** Mode -5: Wi-Fi deinitialized (xs6wifi.c). */
const OFF = -5;

export class Radio {
  mode = OFF;
  ap: { ssid: string; password: string; channel: number; max: number; wpa2: boolean; inAir: boolean } | null = null;
  association: { bssid: string; gateway: string; infrastructure: boolean } | null = null;
  ethernetStarted = false;
  ethernetUp = false;
  stationMac: string;
  txPowerDbm = 20;
  private scanning = false;

  constructor(private readonly o: RadioOptions) {
    this.stationMac = o.wifiMac;
  }

  get bssid(): string {
    return softApMac(this.o.wifiMac);
  }

  mac(kind: string): string {
    if (kind === 'softap') return this.bssid;
    if (kind === 'ethernet') {
      if (!this.o.ethernetMac) throw new Error('this board has no Ethernet MAC');
      return this.o.ethernetMac;
    }
    if (kind === 'base' || kind === 'station') return this.o.wifiMac; // esp_read_mac: the factory MAC
    throw new Error(`no MAC of kind ${kind}`);
  }

  /** xs6wifi.c initWiFi: the first use of Wi-Fi starts it in the mode asked for. */
  private start(mode: number): void {
    if (this.mode === OFF) this.mode = mode;
  }

  setMode(mode: number): void {
    if (mode === OFF) {
      this.powerOff();
      return;
    }
    if (!(mode & 2) && this.ap) this.stopAp();
    if (!(mode & 1) && this.association) this.disconnect(false);
    this.mode = mode;
  }

  accessPoint(c: { ssid: string; password: string; channel: number; hidden: boolean; max: number; station: boolean }): void {
    this.start(2);
    if (this.ap) this.stopAp();
    this.ap = { ssid: c.ssid, password: c.password, channel: c.channel, max: c.max, wpa2: false, inAir: false };
    if (this.mode !== 2 && this.mode !== 3) this.mode = c.station ? 3 : 2;
  }

  /** esp_wifi_set_config(WIFI_IF_AP) with WPA2-PSK/CCMP: the AP is now one the air admits. */
  wpa2Only(): void {
    const ap = this.ap;
    if (!ap) throw new Error('ESP_ERR_WIFI_MODE: the SoftAP is not started');
    if (!ap.password) throw new Error('ESP_ERR_WIFI_PASSWORD: an open AP cannot be WPA2');
    ap.wpa2 = true;
    // On the air once this call has returned; a TX power set afterwards applies to it (setTxPower).
    setImmediate(() => {
      if (this.ap !== ap || ap.inAir || !this.o.air) return;
      ap.inAir = true;
      this.o.air.start({
        ssid: ap.ssid,
        bssid: this.bssid,
        auth: 'wpa2-psk',
        password: ap.password,
        txPowerDbm: this.txPowerDbm,
        maxStations: ap.max,
        channel: ap.channel,
        position: this.o.position,
        gatewayUrl: this.o.softApUrl,
        associate: async () => this.o.reports.wifi('station_connect'),
      });
    });
  }

  stopAp(): void {
    if (this.ap?.inAir) this.o.air?.stop(this.bssid);
    this.ap = null;
    if (this.mode === 2) this.mode = 0;
    else if (this.mode === 3) this.mode = 1;
  }

  stations(): string[] {
    const mac = this.ap?.inAir ? (this.o.air?.stationOf(this.bssid) ?? null) : null;
    return mac ? [mac] : [];
  }

  /** The associated station whose lease is this address. */
  stationAt(address: string): string | null {
    return this.ap?.inAir ? (this.o.air?.stationAt(this.bssid, address) ?? null) : null;
  }

  deauth(mac: string): boolean {
    if (!this.stations().includes(mac)) return false;
    this.o.air?.disconnect(this.bssid, mac);
    this.o.reports.wifi('station_disconnect');
    return true;
  }

  setTxPower(quarterDbm: number): boolean {
    if (this.mode === OFF || this.mode === 0) return false;
    this.txPowerDbm = quarterDbm / 4;
    // The AP may be on the air already (wpa2Only put it there at the power it had then).
    if (this.ap?.inAir) this.o.air?.setTxPower(this.bssid, this.txPowerDbm);
    return true;
  }

  private station() {
    return { mac: this.stationMac, position: this.o.position(), txPowerDbm: this.txPowerDbm, address: this.o.stationAddress };
  }

  scan(): void {
    this.start(1);
    if (!(this.mode & 1)) throw new Error('scan request failed: the station interface is off');
    const results = this.o.air?.scan(this.station()) ?? [];
    this.scanning = true;
    setImmediate(() => {
      if (!this.scanning) return;
      this.scanning = false;
      for (const r of results) this.o.reports.scanResult(r.ssid, macBytes(r.bssid), r.rssiDbm, r.channel, 'wpa2_psk');
      this.o.reports.scanDone();
    });
  }

  /** esp_wifi_sta_get_ap_info's RSSI: the associated AP as the air carries it, or null. */
  stationRssi(): number | null {
    if (!this.association || !this.o.air) return null;
    return this.o.air.rssi(this.association.bssid, this.station());
  }

  stopScan(): void {
    this.scanning = false;
  }

  connect(c: { ssid: string; password: string; bssid?: string }): void {
    this.start(1);
    if (!(this.mode & 1)) throw new Error('esp_wifi_connect failed: the station interface is off');
    if (this.association) this.disconnect(false);
    const air = this.o.air;
    const station = this.station();
    setImmediate(async () => {
      try {
        if (!air) throw new Error(`no AP ${c.ssid} in range`);
        const joined = await air.connect({ ssid: c.ssid, password: c.password, ...(c.bssid ? { bssid: c.bssid } : {}), station });
        this.association = { bssid: joined.bssid, gateway: joined.gatewayUrl.replace(/^https?:\/\//, ''), infrastructure: joined.infrastructure };
        this.o.reports.wifi('connect');
        this.o.reports.wifi('gotIP');
      } catch (err) {
        // xs6wifi.c: reason -1 when the 4-way handshake failed (a wrong password), else the driver's code (201: no AP found).
        this.o.reports.wifi('disconnect', err instanceof Error && /handshake/.test(err.message) ? -1 : 201);
      }
    });
  }

  disconnect(report = true): void {
    const was = this.association;
    if (was) this.o.air?.disconnect(was.bssid, this.stationMac);
    this.association = null;
    if (report && was) this.o.reports.wifi('disconnect', 8);
  }

  startEthernet(): void {
    if (!this.o.ethernetMac) throw new Error('no W5500 answers on SPI');
    this.ethernetStarted = true;
    // The link and DHCP: immediate here.
    setImmediate(() => {
      if (!this.ethernetStarted) return;
      this.ethernetUp = true;
      this.o.reports.ethernet('start');
      this.o.reports.ethernet('connect');
      this.o.reports.ethernet('gotIP');
    });
  }

  /** Power off or reset: the radios go quiet, the station MAC override and TX power are gone. */
  powerOff(): void {
    if (this.ap?.inAir) this.o.air?.stop(this.bssid);
    this.ap = null;
    if (this.association) this.o.air?.disconnect(this.association.bssid, this.stationMac);
    this.association = null;
    this.scanning = false;
    this.ethernetStarted = false;
    this.ethernetUp = false;
    this.mode = OFF;
    this.stationMac = this.o.wifiMac;
    this.txPowerDbm = 20;
  }
}
