// The shared air of in-memory boards: SoftAPs that stations scan and join (WPA2-PSK only: an open or
// WPA1 AP, or a bad passphrase, is refused at start; password checked, one station at a time), and requests from a station to its AP's gateway routed to the AP's SoftAP
// listener with the station's MAC. Range is not modelled here (every AP is in range).
import type { ClientRequest, ClientResponse, HttpHandler, Iface } from '../../hal/network.ts';
import { softApConfigProblem, type Association, type Radio, type ScanResult, type SoftApConfig } from '../../hal/radio.ts';
import type { DeviceIdentity } from '../../hal/system.ts';
import { toBodyReader } from '../../core/http/respond.ts';
import { softApMac } from '../../../chip/esp32s3-mac.ts';

interface AirAp {
  radio: MemoryRadio;
  config: SoftApConfig;
  bssid: string;
  station: string | null;
}

export class MemoryAir {
  readonly aps = new Map<string, AirAp>();
}

export class MemoryRadio implements Radio {
  private stationMac: string;
  private associatedWith: AirAp | null = null;
  private readonly associationHandlers: ((mac: string) => void)[] = [];
  txPowerDbm = 20;

  constructor(
    private readonly air: MemoryAir,
    private readonly identity: DeviceIdentity,
    private readonly listeners: Map<Iface, HttpHandler>,
  ) {
    this.stationMac = identity.wifiMac;
  }

  /** The BSSID: the SoftAP's MAC, as the chip derives it (firmware/chip/esp32s3-mac.ts). */
  softApBssid(): string {
    return softApMac(this.identity.wifiMac);
  }

  async startSoftAp(config: SoftApConfig): Promise<void> {
    const problem = softApConfigProblem(config);
    if (problem) throw new Error(problem);
    this.air.aps.set(this.softApBssid(), { radio: this, config, bssid: this.softApBssid(), station: null });
  }

  async stopSoftAp(): Promise<void> {
    const ap = this.air.aps.get(this.softApBssid());
    this.air.aps.delete(this.softApBssid());
    if (ap?.station) for (const r of stationsOf(ap)) r.associatedWith = null;
  }

  onStationAssociated(handler: (mac: string) => void): void {
    this.associationHandlers.push(handler);
  }

  async scan(): Promise<ScanResult[]> {
    return [...this.air.aps.values()].map((ap) => ({ ssid: ap.config.ssid, bssid: ap.bssid, channel: 6, rssiDbm: -40 }));
  }

  setStationMac(mac: string): void {
    this.stationMac = mac;
  }

  currentStationMac(): string {
    return this.stationMac;
  }

  setTxPowerDbm(dbm: number): void {
    this.txPowerDbm = dbm;
  }

  async connect(o: { ssid: string; password: string; bssid?: string; timeoutMs: number }): Promise<Association> {
    const ap = [...this.air.aps.values()].find((a) => a.config.ssid === o.ssid && (o.bssid === undefined || a.bssid === o.bssid));
    if (!ap) throw new Error(`no AP ${o.ssid} in range`);
    if (ap.config.password !== o.password) throw new Error('WPA2 handshake failed: wrong password');
    if (ap.station !== null && ap.station !== this.stationMac) throw new Error('the AP has a station already');
    ap.station = this.stationMac;
    this.associatedWith = ap;
    allStations.set(this.stationMac, this);
    ap.radio.associationHandlers.forEach((h) => h(this.stationMac));
    if (!this.air.aps.has(ap.bssid)) {
      this.associatedWith = null;
      throw new Error('the AP shut down during association');
    }
    return { gatewayUrl: `http://softap.${ap.bssid.replace(/:/g, '-').toLowerCase()}` };
  }

  /** Every AP is in range here, at the RSSI scans report. */
  stationRssi(): number | null {
    return this.associatedWith ? -40 : null;
  }

  async disconnect(): Promise<void> {
    if (this.associatedWith && this.associatedWith.station === this.stationMac) this.associatedWith.station = null;
    this.associatedWith = null;
  }

  /** A request to the associated AP's gateway, or null when the URL is not one. */
  route(req: ClientRequest): Promise<ClientResponse> | null {
    const m = /^http:\/\/softap\.([0-9a-f-]{17})(\/.*)?$/.exec(req.url);
    if (!m) return null;
    const ap = this.associatedWith;
    if (!ap || !this.air.aps.has(ap.bssid) || ap.bssid.replace(/:/g, '-').toLowerCase() !== m[1]) {
      return Promise.reject(new Error('not associated with that AP'));
    }
    const handler = ap.radio.listeners.get('softap');
    if (!handler) return Promise.reject(new Error('connection refused'));
    const pathAndQuery = m[2] ?? '/';
    const q = pathAndQuery.indexOf('?');
    const query: Record<string, string> = {};
    if (q >= 0) for (const pair of pathAndQuery.slice(q + 1).split('&')) if (pair) query[decodeURIComponent(pair.split('=')[0]!)] = decodeURIComponent(pair.split('=')[1] ?? '');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = v;
    return handler({ method: req.method, path: q >= 0 ? pathAndQuery.slice(0, q) : pathAndQuery, query, headers, iface: 'softap', stationMac: this.stationMac, body: toBodyReader(req.body) }).then((res) => ({
      status: res.status,
      headers: res.headers,
      body: toBodyReader(res.body),
    }));
  }
}

const allStations = new Map<string, MemoryRadio>();

function stationsOf(ap: AirAp): MemoryRadio[] {
  const r = ap.station ? allStations.get(ap.station) : undefined;
  return r ? [r] : [];
}
