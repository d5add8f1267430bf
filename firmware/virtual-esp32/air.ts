// The virtual air shared by the XS boards of one host process (DESIGN.md section 6): SoftAPs with
// SSID, BSSID, channel, WPA2-PSK (CCMP) passphrase and TX power at a bench position (an open or WPA1
// AP, or a passphrase outside 8-63 characters, is refused); stations that scan (seeing
// only APs in range), associate with the right password, one at a time; the AP learns the station's
// MAC at association (and may shut down, spec 3.2). A station reaches its AP at the AP board's SoftAP
// listener.
import { softApConfigProblem, type ScanResult, type SoftApAuth } from '../src/hal/radio.ts';

export interface Position {
  x: number;
  y: number;
}

/**
 * Range in metres for a TX power: about 1.5 m at 2 dBm (spec 3.2: 3-5 feet), doubling every 6 dB as
 * in free space. A link needs both ends in range of each other, so the weaker side decides.
 */
export function rangeMetres(txPowerDbm: number): number {
  return 1.5 * 10 ** ((txPowerDbm - 2) / 20);
}

export function distance(a: Position, b: Position): number {
  return Math.hypot(a.x - b.x, a.y - b.y);
}

export interface Station {
  mac: string;
  position: Position;
  txPowerDbm: number;
  /** The address its AP's DHCP server leases it (the station's loopback address here). */
  address?: string;
}

export interface AirAp {
  ssid: string;
  bssid: string;
  /** The AP's authentication mode: only "wpa2-psk" (CCMP) is accepted by start(). */
  auth: SoftApAuth;
  password: string;
  txPowerDbm: number;
  maxStations: number;
  channel: number;
  position: () => Position;
  /** The AP board's SoftAP listener, e.g. http://127.0.0.3:40123 */
  gatewayUrl: () => string | undefined;
  /** Tells the AP board a station associated; the AP may stop during this call. */
  associate: (mac: string) => Promise<void>;
  /** The site's Wi-Fi (a router: its stations reach the bench's services), not a board's SoftAP. */
  infrastructure?: boolean;
  station: string | null;
  stationAddress: string | null;
}

export class VirtualAir {
  private readonly aps = new Map<string, AirAp>();

  /** Starts an AP; throws (starting nothing) for an open or WPA1 AP or a bad SSID or passphrase. */
  start(ap: Omit<AirAp, 'station' | 'stationAddress'>): void {
    const problem = softApConfigProblem(ap);
    if (problem) throw new Error(problem);
    this.aps.set(ap.bssid, { ...ap, station: null, stationAddress: null });
  }

  /** esp_wifi_set_max_tx_power on an AP already on the air: its range changes from now on. */
  setTxPower(bssid: string, txPowerDbm: number): void {
    const ap = this.aps.get(bssid);
    if (ap) ap.txPowerDbm = txPowerDbm;
  }

  stop(bssid: string): void {
    this.aps.delete(bssid);
  }

  /** Whether an AP and a station hear each other. */
  inRange(ap: AirAp, station: Station): boolean {
    return distance(ap.position(), station.position) <= rangeMetres(Math.min(ap.txPowerDbm, station.txPowerDbm));
  }

  /** The APs this station hears, with an RSSI that falls with distance. */
  scan(station: Station): ScanResult[] {
    return [...this.aps.values()]
      .filter((ap) => this.inRange(ap, station))
      .map((ap) => ({ ssid: ap.ssid, bssid: ap.bssid, channel: ap.channel, rssiDbm: rssiAt(ap, station) }));
  }

  /** The RSSI a station hears an AP at (dBm), or null when the AP is gone or out of range. */
  rssi(bssid: string, station: Station): number | null {
    const ap = this.aps.get(bssid);
    return ap && this.inRange(ap, station) ? rssiAt(ap, station) : null;
  }

  /** WPA2 association: in range, the password must match and the AP must have room; the AP sees the MAC. */
  async connect(o: { ssid: string; password: string; bssid?: string; station: Station }): Promise<{ gatewayUrl: string; bssid: string; infrastructure: boolean }> {
    const ap = [...this.aps.values()].find((a) => a.ssid === o.ssid && (o.bssid === undefined || a.bssid === o.bssid) && this.inRange(a, o.station));
    if (!ap) throw new Error(`no AP ${o.ssid} in range`);
    if (ap.password !== o.password) throw new Error('WPA2 handshake failed');
    const mac = o.station.mac;
    if (ap.maxStations === 1 && ap.station !== null && ap.station !== mac) throw new Error('the AP accepts one station at a time');
    ap.station = mac;
    ap.stationAddress = o.station.address ?? null;
    await ap.associate(mac);
    const gatewayUrl = ap.gatewayUrl();
    if (!this.aps.has(ap.bssid) || !gatewayUrl) throw new Error('the AP shut down after association');
    return { gatewayUrl, bssid: ap.bssid, infrastructure: !!ap.infrastructure };
  }

  /**
   * The site's Wi-Fi (a router, not a board): stations that join it reach the bench's services on
   * loopback (the cloud, the MQTT broker).
   */
  addInfrastructureAp(o: { ssid: string; password: string; bssid: string; position: Position; txPowerDbm?: number; channel?: number }): void {
    this.start({
      ssid: o.ssid,
      bssid: o.bssid,
      auth: 'wpa2-psk',
      password: o.password,
      txPowerDbm: o.txPowerDbm ?? 20,
      maxStations: 32,
      channel: o.channel ?? 1,
      position: () => o.position,
      gatewayUrl: () => 'http://127.0.0.1',
      associate: async () => undefined,
      infrastructure: true,
    });
  }

  disconnect(bssid: string, mac: string): void {
    const ap = this.aps.get(bssid);
    if (ap?.station === mac) {
      ap.station = null;
      ap.stationAddress = null;
    }
  }

  /** The MAC of the station associated with an AP from this address (the AP's DHCP lease), or null. */
  stationAt(bssid: string, address: string): string | null {
    const ap = this.aps.get(bssid);
    return ap && ap.station !== null && (ap.stationAddress === null || ap.stationAddress === address) ? ap.station : null;
  }

  /** Whether an address is some board's SoftAP (its stations alone reach it). */
  isSoftApAddress(address: string): boolean {
    for (const ap of this.aps.values()) {
      if (ap.infrastructure) continue;
      const url = ap.gatewayUrl();
      if (url && new URL(url).hostname === address) return true;
    }
    return false;
  }

  /** The station associated with an AP: the only one that can be talking to its SoftAP listener. */
  stationOf(bssid: string): string | null {
    return this.aps.get(bssid)?.station ?? null;
  }
}

/** Free-space loss, roughly: the AP's power less 40 dB at a metre and 20 dB per decade of distance. */
function rssiAt(ap: AirAp, station: Station): number {
  return Math.round(ap.txPowerDbm - 40 - 20 * Math.log10(Math.max(0.1, distance(ap.position(), station.position))));
}
