// Provisioning mode (spec 2.5, 3.2): a WPA2 SoftAP "Device-Provisioning" at about 2 dBm, one station
// at a time, password derived from the BSSID, an allowlist of registered MACs; it ends on time-out,
// on a station outside the allowlist (SoftAP shut down, OLED warning, logged), or on request.
import type { Hal } from '../../hal/index.ts';
import { FailureThrottle } from '../auth/failure-throttle.ts';
import type { RecordStore } from '../records.ts';
import type { FirmwareSettings } from '../settings.ts';
import { softApPassword } from './softap-password.ts';
import type { ProvisioningTokens } from './tokens.ts';

export const PROVISIONING_SSID = 'Device-Provisioning';

export type ModeState = 'disabled' | 'enabling' | 'enabled' | 'disabling';

export interface ModeStatus {
  active: boolean;
  state: ModeState;
  ssid?: string;
  password?: string;
  bssid?: string;
  expires_in?: number;
  allowlist_size?: number;
  last_stop_reason?: string;
}

export class ProvisioningMode {
  private state: ModeState = 'disabled';
  private allowlist = new Set<string>();
  private timer: number | undefined;
  private expiresAtMs = 0;
  private password = '';
  private lastStopReason: string | undefined;
  /**
   * Failed token exchanges (unknown UUID, MAC not registered): throttled like logins
   * (docs/firmware-login-throttle.md); each enable starts a new session with a clean count.
   */
  readonly exchangeThrottle: FailureThrottle;

  constructor(
    private readonly hal: Hal,
    private readonly records: RecordStore,
    private readonly tokens: ProvisioningTokens,
    private readonly settings: FirmwareSettings,
    private readonly log: (level: 'info' | 'warning' | 'error', message: string) => void,
  ) {
    hal.radio.onStationAssociated((mac) => this.onStationAssociated(mac));
    this.exchangeThrottle = new FailureThrottle('provisioning token exchange', () => hal.clock.uptime(), log);
  }

  get active(): boolean {
    return this.state === 'enabled';
  }

  async enable(): Promise<ModeStatus> {
    if (this.state === 'enabled' || this.state === 'enabling') return this.status();
    this.state = 'enabling';
    this.allowlist = this.records.allowlist();
    const bssid = this.hal.radio.softApBssid();
    this.password = softApPassword(bssid);
    try {
      await this.hal.radio.startSoftAp({
        ssid: PROVISIONING_SSID,
        auth: 'wpa2-psk',
        password: this.password,
        txPowerDbm: this.settings.provisioningTxPowerDbm,
        maxStations: 1,
      });
    } catch (err) {
      this.state = 'disabled';
      throw err;
    }
    this.state = 'enabled';
    this.exchangeThrottle.reset();
    const ttlMs = this.settings.provisioningModeTtlSeconds * 1000;
    this.expiresAtMs = this.hal.clock.uptime() + ttlMs;
    this.timer = this.hal.timers.setTimeout(() => void this.disable('timeout'), ttlMs);
    this.log('info', `provisioning mode on: ${this.allowlist.size} MACs allowed, ${this.settings.provisioningModeTtlSeconds} s`);
    this.hal.display.show(['Provisioning on', PROVISIONING_SSID, `${this.allowlist.size} MACs, ${Math.round(this.settings.provisioningModeTtlSeconds / 60)} min`]);
    return this.status();
  }

  async disable(reason: string): Promise<void> {
    if (this.state === 'disabled' || this.state === 'disabling') return;
    this.state = 'disabling';
    if (this.timer !== undefined) this.hal.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.tokens.clear();
    try {
      await this.hal.radio.stopSoftAp();
    } finally {
      this.state = 'disabled';
      this.lastStopReason = reason;
      this.log('info', `provisioning mode off: ${reason}`);
      // A refused station's warning stays on the screen (spec 3.2).
      if (reason !== 'mac_not_allowed') this.hal.display.show(['Provisioning off', reason]);
    }
  }

  allows(mac: string): boolean {
    return this.allowlist.has(mac);
  }

  status(): ModeStatus {
    if (this.state !== 'enabled') {
      return { active: false, state: this.state, ...(this.lastStopReason ? { last_stop_reason: this.lastStopReason } : {}) };
    }
    return {
      active: true,
      state: this.state,
      ssid: PROVISIONING_SSID,
      password: this.password,
      bssid: this.hal.radio.softApBssid(),
      expires_in: Math.max(0, Math.round((this.expiresAtMs - this.hal.clock.uptime()) / 1000)),
      allowlist_size: this.allowlist.size,
    };
  }

  /** Spec 3.2: a station outside the allowlist shuts the SoftAP down, with an OLED warning. */
  private onStationAssociated(mac: string): void {
    if (this.state !== 'enabled') return;
    if (this.allowlist.has(mac)) {
      this.log('info', `station ${mac} associated`);
      return;
    }
    this.hal.display.show(['Prov: MAC refused', mac, 'SoftAP stopped']);
    this.log('warning', `station ${mac} is not in the allowlist: SoftAP shut down`);
    void this.disable('mac_not_allowed');
  }
}
