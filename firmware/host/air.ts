// A minimal virtual air shared by the XS boards of one host process: SoftAPs with SSID, BSSID and
// WPA2 password; stations that scan, associate with the right password, one at a time; the AP learns
// the station's MAC at association (and may shut down, spec 3.2). A station reaches its AP at the AP
// board's SoftAP listener. Range and TX power are recorded, not yet modelled (the bench's air, issue 4).
import type { ScanResult } from '../src/hal/radio.ts';

export interface AirAp {
  ssid: string;
  bssid: string;
  password: string;
  txPowerDbm: number;
  maxStations: number;
  /** The AP board's SoftAP listener, e.g. http://127.0.0.3:40123 */
  gatewayUrl: () => string | undefined;
  /** Tells the AP board a station associated; the AP may stop during this call. */
  associate: (mac: string) => Promise<void>;
  station: string | null;
}

export class VirtualAir {
  private readonly aps = new Map<string, AirAp>();

  start(ap: Omit<AirAp, 'station'>): void {
    this.aps.set(ap.bssid, { ...ap, station: null });
  }

  stop(bssid: string): void {
    this.aps.delete(bssid);
  }

  scan(): ScanResult[] {
    return [...this.aps.values()].map((ap) => ({ ssid: ap.ssid, bssid: ap.bssid, channel: 6, rssiDbm: -30 - ap.txPowerDbm }));
  }

  /** WPA2 association: the password must match and the AP must have room; the AP sees the MAC. */
  async connect(o: { ssid: string; password: string; bssid?: string; mac: string }): Promise<{ gatewayUrl: string; bssid: string }> {
    const ap = [...this.aps.values()].find((a) => a.ssid === o.ssid && (o.bssid === undefined || a.bssid === o.bssid));
    if (!ap) throw new Error(`no AP ${o.ssid} in range`);
    if (ap.password !== o.password) throw new Error('WPA2 handshake failed');
    if (ap.station !== null && ap.station !== o.mac) throw new Error('the AP accepts one station at a time');
    ap.station = o.mac;
    await ap.associate(o.mac);
    const gatewayUrl = ap.gatewayUrl();
    if (!this.aps.has(ap.bssid) || !gatewayUrl) throw new Error('the AP shut down after association');
    return { gatewayUrl, bssid: ap.bssid };
  }

  disconnect(bssid: string, mac: string): void {
    const ap = this.aps.get(bssid);
    if (ap?.station === mac) ap.station = null;
  }

  /** The station associated with an AP: the only one that can be talking to its SoftAP listener. */
  stationOf(bssid: string): string | null {
    return this.aps.get(bssid)?.station ?? null;
  }
}
