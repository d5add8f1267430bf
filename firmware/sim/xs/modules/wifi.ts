// `wifi` on ESP32 (modules/network/wifi/esp32/xs6wifi.c + wifi.js, documentation/network/wifi.md):
// - WiFi.accessPoint({ssid, password, channel, hidden, interval, max, station}): SSID at most 32
//   bytes, password 8 to 64 bytes (shorter or longer throws), channel 1 to 13; with a password the
//   AP starts in WPA/WPA2 mixed mode (the platform's native makes it WPA2-only); `station: true`
//   keeps the station interface (AP+STA).
// - WiFi.scan(dictionary, callback): each AP found, then callback(null); one scan at a time.
// - WiFi.connect({ssid, password, bssid}), WiFi.disconnect(), WiFi.mode (0 none, 1 station,
//   2 AP, 3 both): connect needs the station interface in the mode.
// - A monitor, new WiFi(dictionary?, callback): "connect", "disconnect" (with a reason; -1 when the
//   4-way handshake failed), "gotIP", "lostIP", "station_connect", "station_disconnect" (no MAC).
// The radio is the host's virtual air (firmware/virtual-esp32/air.ts).
import { hostCall, newId, onEvent } from '../host.ts';

type Monitor = (message: string, reason?: number) => void;
const monitors = new Map<number, Monitor>();
let scanning: ((item: unknown) => void) | undefined;

onEvent('wifi', (event) => {
  if (event.message === 'scan') {
    const report = scanning;
    scanning = undefined;
    for (const item of event.items as { ssid: string; bssid: number[]; rssi: number; channel: number }[]) {
      report?.({ ssid: item.ssid, bssid: new Uint8Array(item.bssid).buffer, rssi: item.rssi, channel: item.channel, authentication: 'wpa2_psk', hidden: false });
    }
    report?.(null);
    return;
  }
  for (const monitor of [...monitors.values()]) monitor(event.message as string, event.reason as number | undefined);
});

function utf8Length(text: string): number {
  return encodeURIComponent(text).replace(/%[0-9A-F]{2}/g, '.').length;
}

export default class WiFi {
  static readonly gotIP = 'gotIP';
  static readonly lostIP = 'lostIP';
  static readonly connected = 'connect';
  static readonly disconnected = 'disconnect';
  static readonly station_connect = 'station_connect';
  static readonly station_disconnect = 'station_disconnect';
  readonly #id = newId();

  constructor(dictionary?: { ssid: string; password?: string; bssid?: ArrayBuffer }, onNotify?: Monitor) {
    if (onNotify) monitors.set(this.#id, onNotify);
    if (dictionary) WiFi.connect(dictionary);
  }

  close(): void {
    monitors.delete(this.#id);
  }

  static get mode(): number {
    return hostCall('wifi.mode').value as number;
  }

  static set mode(mode: number) {
    if (![0, 1, 2, 3].includes(mode)) throw new RangeError('invalid mode');
    hostCall('wifi.mode', { mode });
  }

  static accessPoint(options: { ssid: string; password?: string; channel?: number; hidden?: boolean; interval?: number; max?: number; station?: boolean }): void {
    const ssid = options?.ssid;
    if (typeof ssid !== 'string') throw new Error('ssid required');
    if (utf8Length(ssid) > 32) throw new Error('ssid too long - 32 bytes max');
    const password = options.password;
    if (password !== undefined) {
      if (utf8Length(password) < 8) throw new Error('password too short - 8 bytes min');
      if (utf8Length(password) > 64) throw new Error('password too long - 64 bytes max');
    }
    const channel = options.channel ?? 1;
    if (!Number.isInteger(channel) || channel < 1 || channel > 13) throw new RangeError('invalid channel');
    const max = options.max ?? 4;
    if (!Number.isInteger(max) || max < 1 || max > 10) throw new RangeError('invalid max');
    hostCall('wifi.ap.start', { ssid, password: password ?? null, channel, hidden: !!options.hidden, max, station: !!options.station });
  }

  static scan(_dictionary: { hidden?: boolean; channel?: number }, callback: (item: unknown) => void): void {
    if (scanning) throw new Error('scan already in progress');
    const mode = WiFi.mode;
    if (mode !== 1 && mode !== 3) throw new Error('scan needs the station interface');
    scanning = callback;
    hostCall('wifi.scan');
  }

  static connect(dictionary: { ssid: string; password?: string; bssid?: ArrayBuffer }): void {
    const mode = WiFi.mode;
    if (mode !== 1 && mode !== 3) throw new Error('connect needs the station interface');
    if (typeof dictionary?.ssid !== 'string' || utf8Length(dictionary.ssid) > 32) throw new Error('ssid required (32 bytes max)');
    const bssid = dictionary.bssid ? Array.from(new Uint8Array(dictionary.bssid)) : null;
    hostCall('wifi.connect', { ssid: dictionary.ssid, password: dictionary.password ?? '', bssid });
  }

  static disconnect(): void {
    hostCall('wifi.disconnect');
  }
}
