// The host side of the emulated `wifi` and `ethernet` modules and of the platform's Wi-Fi natives:
// the board's radio in the shared virtual air (firmware/host/air.ts), its interfaces' addresses
// (a loopback address per interface), and the reports a monitor receives.
// - The SoftAP: WiFi.accessPoint starts it in WPA/WPA2 mixed mode, which the virtual air (spec 2.5)
//   does not admit: it appears in the air once the platform's native has made it WPA2-only, with
//   the TX power set in the same turn.
// - A station associates through the air; the AP's board is told ("station_connect", no MAC) and its
//   station list (esp_wifi_ap_get_sta_list) holds the new MAC. //@@ The air has one station per AP
//   (spec 2.5), so the DHCP lookup of a request's address answers that station whatever the address.
// - esp_wifi_set_max_tx_power fails while Wi-Fi is stopped (mode 0), as on the chip.
import type { Position, VirtualAir } from '../../host/air.ts';

export type Iface = 'ethernet' | 'ap' | 'station';
export type RadioEvent = { kind: 'wifi'; message: string; reason?: number; items?: unknown[] } | { kind: 'ethernet'; message: string };

export interface RadioOptions {
  air?: VirtualAir;
  wifiMac: string;
  ethernetMac?: string;
  /** Each interface's loopback address. */
  addresses: Record<Iface, string>;
  position: () => Position;
  /** The board's SoftAP listener URL, once bound. */
  softApUrl: () => string | undefined;
  emit: (event: RadioEvent) => Promise<void>;
}

export function macBytes(mac: string): Buffer {
  return Buffer.from(mac.replace(/:/g, ''), 'hex');
}

export function macString(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
}

/** An ESP32's SoftAP MAC is its station MAC + 1. */
export function softApMac(wifiMac: string): string {
  const bytes = macBytes(wifiMac);
  bytes[5] = (bytes[5]! + 1) & 0xff;
  return macString(bytes);
}

export class SimRadio {
  mode = 0;
  ap: { ssid: string; password: string | null; channel: number; max: number; wpa2: boolean; inAir: boolean } | null = null;
  association: { bssid: string; gateway: string } | null = null;
  ethernetUp = false;
  stationMac: string;
  txPowerDbm = 20;

  constructor(private readonly o: RadioOptions) {
    this.stationMac = o.wifiMac;
  }

  get bssid(): string {
    return softApMac(this.o.wifiMac);
  }

  address(iface: Iface): string | null {
    if (iface === 'ethernet') return this.ethernetUp ? this.o.addresses.ethernet : null;
    if (iface === 'ap') return this.ap ? this.o.addresses.ap : null;
    return this.association ? this.o.addresses.station : null;
  }

  mac(kind: string): string {
    if (kind === 'softap') return this.bssid;
    if (kind === 'ethernet') {
      if (!this.o.ethernetMac) throw new Error('this board has no Ethernet MAC');
      return this.o.ethernetMac;
    }
    return this.o.wifiMac; // base and station: the factory MAC (esp_read_mac)
  }

  setMode(mode: number): void {
    if (!(mode & 2) && this.ap) this.stopAp();
    if (!(mode & 1) && this.association) this.disconnect(false);
    this.mode = mode;
  }

  startAp(c: { ssid: string; password: string | null; channel: number; max: number; station: boolean }): void {
    if (this.ap) this.stopAp();
    this.ap = { ssid: c.ssid, password: c.password, channel: c.channel, max: c.max, wpa2: false, inAir: false };
    this.mode = c.station || this.mode & 1 ? 3 : 2;
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
        password: ap.password!,
        txPowerDbm: this.txPowerDbm,
        maxStations: ap.max,
        channel: ap.channel,
        position: this.o.position,
        gatewayUrl: this.o.softApUrl,
        associate: (mac) => this.o.emit({ kind: 'wifi', message: 'station_connect' }),
      });
    });
  }

  stopAp(): void {
    if (this.ap?.inAir) this.o.air?.stop(this.bssid);
    this.ap = null;
    this.mode &= ~2;
  }

  stations(): string[] {
    const mac = this.ap?.inAir ? (this.o.air?.stationOf(this.bssid) ?? null) : null;
    return mac ? [mac] : [];
  }

  deauth(mac: string): boolean {
    if (!this.stations().includes(mac)) return false;
    this.o.air?.disconnect(this.bssid, mac);
    void this.o.emit({ kind: 'wifi', message: 'station_disconnect' });
    return true;
  }

  setTxPower(quarterDbm: number): boolean {
    this.txPowerDbm = quarterDbm / 4;
    // The AP may be on the air already (wpa2Only put it there at the power it had then).
    if (this.ap?.inAir) this.o.air?.setTxPower(this.bssid, this.txPowerDbm);
    return this.mode !== 0;
  }

  scan(): void {
    const station = { mac: this.stationMac, position: this.o.position(), txPowerDbm: this.txPowerDbm };
    const items = (this.o.air?.scan(station) ?? []).map((r) => ({ ssid: r.ssid, bssid: [...macBytes(r.bssid)], rssi: r.rssiDbm, channel: r.channel }));
    setImmediate(() => void this.o.emit({ kind: 'wifi', message: 'scan', items }));
  }

  connect(c: { ssid: string; password: string; bssid: number[] | null }): void {
    const air = this.o.air;
    const station = { mac: this.stationMac, position: this.o.position(), txPowerDbm: this.txPowerDbm };
    const bssid = c.bssid ? macString(Uint8Array.from(c.bssid)) : undefined;
    setImmediate(async () => {
      try {
        if (!air) throw new Error(`no AP ${c.ssid} in range`);
        const joined = await air.connect({ ssid: c.ssid, password: c.password, ...(bssid ? { bssid } : {}), station });
        this.association = { bssid: joined.bssid, gateway: joined.gatewayUrl.replace(/^https?:\/\//, '') };
        await this.o.emit({ kind: 'wifi', message: 'connect' });
        await this.o.emit({ kind: 'wifi', message: 'gotIP' });
      } catch (err) {
        // xs6wifi.c: reason -1 when the 4-way handshake failed (a wrong password), else the driver's code (201: no AP found).
        const reason = err instanceof Error && /handshake/.test(err.message) ? -1 : 201;
        await this.o.emit({ kind: 'wifi', message: 'disconnect', reason });
      }
    });
  }

  disconnect(report = true): void {
    if (this.association) this.o.air?.disconnect(this.association.bssid, this.stationMac);
    const was = this.association;
    this.association = null;
    if (report && was) void this.o.emit({ kind: 'wifi', message: 'disconnect', reason: 8 });
  }

  startEthernet(): void {
    if (!this.o.ethernetMac) throw new Error('no W5500 answers on SPI');
  }

  ethernetMonitor(): void {
    if (!this.o.ethernetMac) return;
    setImmediate(async () => {
      this.ethernetUp = true;
      await this.o.emit({ kind: 'ethernet', message: 'connect' });
      await this.o.emit({ kind: 'ethernet', message: 'gotIP' });
    });
  }

  /** Power off or reset: the radios go quiet, the station MAC override and TX power are gone. */
  powerOff(): void {
    if (this.ap?.inAir) this.o.air?.stop(this.bssid);
    this.ap = null;
    if (this.association) this.o.air?.disconnect(this.association.bssid, this.stationMac);
    this.association = null;
    this.ethernetUp = false;
    this.mode = 0;
    this.stationMac = this.o.wifiMac;
    this.txPowerDbm = 20;
  }
}
