// A virtual ESP32-S3 beneath its firmware: every call of chip-calls.ts answered by the part of the chip
// it is about: the eFuses (the HMAC with the key block the firmware names, efuse.ts; the MACs), the radios (radio.ts), the network beneath lwIP
// (network.ts), the app slots (ota-slots.ts), the I2C bus with its SSD1306 (oled-controller.ts), and
// the restart. One object per running firmware; the radios and the network outlive it (the board's).
import type { ChipCallHandlers } from './chip-calls.ts';
import type { BoardNetwork } from './network.ts';
import type { Nvs } from './nvs.ts';
import type { BootLog } from './boot-log.ts';
import { OtaOpError, type OtaSlots, type OtaUpdate, type AppSlotInfo } from './ota-slots.ts';
import { macBytes, macString } from '../chip/esp32s3-mac.ts';
import type { Radio } from './radio.ts';
import { SSD1306_ADDRESS, type Ssd1306 } from './oled-controller.ts';
import type { RtcMemory } from './rtc-memory.ts';

export interface ChipParts {
  /** esp_hmac_calculate with the eFuse key block of purpose HMAC_UP (Efuses.hmac): the key never leaves this side. */
  fuseHmac: (message: Uint8Array) => Uint8Array;
  radio: Radio;
  network: BoardNetwork;
  /** The interfaces' loopback addresses, for Net.get. */
  addresses: { ethernet: string; ap: string; station: string };
  ota: OtaSlots;
  nvs: Nvs;
  /** The panel on the I2C bus, or undefined when the board has none (no device answers at 0x3C). */
  panel: Ssd1306 | undefined;
  /** A power cut stops flash writes (OTA) as it stops the file system. */
  checkPower: () => void;
  /** ESP-IDF's log on UART0 (`E (ms) tag: …`): what its drivers print when a call fails. */
  log: BootLog;
  /** esp_restart, with who asked: the firmware process exits right after this call. */
  restart: (reason: string) => void;
  /** RTC memory and the reset reason: what the next boot reads of this run's end (rtc-memory.ts). */
  rtc: RtcMemory;
  /**
   * A power-cut trial's watch on the file system (SdkBoardOptions.onFlashOp): asked before each
   * operation that changes it (natives/fw_host_flash.c); resolves with -1 (go on) or, for a write, how
   * many of its bytes reach the flash before the cut. A cut kills the firmware and never resolves.
   */
  flashOp?: (op: string, path: string, length: number) => number | Promise<number>;
}

/** I2C's "no acknowledgement" (the driver throws "command failed"). */
const I2C_NACK = 1;

export function chipCalls(p: ChipParts): Omit<ChipCallHandlers, 'pong'> {
  /** An ESP-IDF call: a refusal is logged on the UART as IDF logs it, and the call fails (the SDK throws its own words). */
  const idf = <T>(tag: string, call: () => T): T => {
    try {
      return call();
    } catch (err) {
      // One line per problem, as esp_image_verify logs each check that fails.
      if (err instanceof OtaOpError) for (const line of err.detail.split('; ')) p.log.error(tag, line);
      throw err;
    }
  };
  let update: OtaUpdate | null = null;
  const app = (info: AppSlotInfo): [string, string, string, string, number] => [info.partition, info.version, info.projectName, info.state, info.secureVersion];
  const up = (iface: string) => (iface === 'ethernet' ? p.radio.ethernetUp : iface === 'ap' ? p.radio.ap !== null : p.radio.association !== null);
  const addressOf = (iface: string): string | undefined => (iface === 'ethernet' || iface === 'ap' || iface === 'station' ? (up(iface) ? p.addresses[iface] : undefined) : undefined);
  return {
    fuseHmac: (message) => [p.fuseHmac(message)],
    macAddress: (kind) => [macBytes(p.radio.mac(kind))],
    restart: (reason) => {
      p.restart(reason);
      return [];
    },
    netGet: (what, iface) => {
      const i = iface === '' ? 'station' : iface;
      let value: string | undefined;
      if (what === 'IP') value = addressOf(i);
      else if (what === 'MAC') value = up(i) ? p.radio.mac(i === 'ap' ? 'softap' : i) : undefined;
      else if (what === 'SSID') value = i === 'ap' ? p.radio.ap?.ssid : undefined;
      else if (what === 'BSSID') value = p.radio.association?.bssid;
      return value === undefined ? [false, ''] : [true, value];
    },
    socketRoute: (kind, address, port) => p.network.route(kind, address, port),
    socketListenPort: (address) => [p.network.listenPort(address)],
    socketListening: (address, port) => {
      p.network.listening(address, port);
      return [];
    },
    socketUnlistened: (address) => {
      p.network.unlistened(address);
      return [];
    },
    wifiSetMode: (mode) => {
      p.radio.setMode(mode);
      return [];
    },
    wifiGetMode: () => [p.radio.mode],
    wifiScan: () => {
      p.radio.scan();
      return [];
    },
    wifiScanStop: () => {
      p.radio.stopScan();
      return [];
    },
    wifiConnect: (ssid, password, bssid) => {
      p.radio.connect({ ssid, password, ...(bssid.length === 6 ? { bssid: macString(bssid) } : {}) });
      return [];
    },
    wifiDisconnect: () => {
      p.radio.disconnect();
      return [];
    },
    wifiAccessPoint: (ssid, password, channel, hidden, max, station) => {
      p.radio.accessPoint({ ssid, password, channel, hidden, max, station });
      return [];
    },
    wifiSetTxPower: (quarterDbm) => [p.radio.setTxPower(quarterDbm)],
    wifiSetStationMac: (mac) => {
      p.radio.stationMac = macString(mac);
      return [];
    },
    wifiSoftApWpa2Only: () => {
      p.radio.wpa2Only();
      return [];
    },
    wifiStationGateway: () => {
      const gateway = p.radio.association?.gateway;
      return gateway === undefined ? [false, ''] : [true, gateway];
    },
    wifiStations: () => [Buffer.concat(p.radio.stations().map((mac) => macBytes(mac)))],
    wifiStationForAddress: (address) => {
      const mac = p.radio.stationAt(address);
      return mac ? [true, macBytes(mac)] : [false, new Uint8Array(0)];
    },
    wifiDeauth: (mac) => [p.radio.deauth(macString(mac))],
    wifiStationRssi: () => {
      const rssi = p.radio.stationRssi();
      return rssi === null ? [false, 0] : [true, rssi];
    },
    ethernetStart: () => {
      p.radio.startEthernet();
      return [];
    },
    ethernetUseDhcp: () => [],
    ethernetUseStaticIp: () => {
      throw new Error('a virtual board takes its Ethernet address from the bench (DHCP)');
    },
    otaBegin: () => {
      p.checkPower();
      update?.abort();
      // The SDK's ota module opens with OTA_WITH_SEQUENTIAL_WRITES: the passive slot is erased as it is written.
      update = idf('esp_ota_ops', () => p.ota.begin(p.ota.passiveSlotBytes()));
      return [];
    },
    otaWrite: (bytes) => {
      p.checkPower();
      if (!update) throw new Error('no OTA in progress');
      const open = update;
      idf('esp_ota_ops', () => open.write(bytes));
      return [];
    },
    otaCancel: () => {
      update?.abort();
      update = null;
      return [];
    },
    otaComplete: () => {
      p.checkPower();
      const done = update;
      update = null;
      if (!done) throw new Error('no OTA in progress');
      // esp_ota_end verifies the image (esp_image_verify), which logs why it refuses it.
      idf('esp_image', () => done.finish());
      return [];
    },
    otaRefusal: () => {
      // The open handle knows how many bytes were written; the natives pass the same count.
      const refused = update?.refusal() ?? null;
      if (!refused) return ['', ''];
      p.log.error('fw_ota', refused.message); // as native/fw_ota.c logs it (ESP_LOGE)
      return [refused.code, refused.message];
    },
    otaRunningApp: () => app(p.ota.runningApp()),
    otaLastInvalidApp: () => {
      const invalid = p.ota.lastInvalidApp();
      return invalid ? [true, ...app(invalid)] : [false, '', '', '', '', 0];
    },
    otaSlotBytes: () => [p.ota.passiveSlotBytes()],
    lastRun: () => {
      const last = p.rtc.lastRun();
      return [last.reason, last.by ?? '', last.crash?.kind ?? '', last.crash?.message ?? '', last.crash?.where ?? ''];
    },
    noteCrash: (kind, message, where) => {
      p.rtc.noteCrash(kind, message, where);
      return [];
    },
    otaMarkValid: () => [idf('esp_ota_ops', () => p.ota.markValid())],
    nvsGet: (domain, key) => {
      const v = p.nvs.get(domain, key);
      if (v === undefined) return [0, 0, '', new Uint8Array(0)];
      if (typeof v === 'boolean') return [1, v ? 1 : 0, '', new Uint8Array(0)];
      if (typeof v === 'number') return [2, v, '', new Uint8Array(0)];
      if (typeof v === 'string') return [3, 0, v, new Uint8Array(0)];
      return [4, 0, '', v];
    },
    nvsSet: (domain, key, kind, integer, text, blob) => {
      p.nvs.set(domain, key, kind === 1 ? integer !== 0 : kind === 2 ? integer : kind === 3 ? text : blob);
      return [];
    },
    nvsDelete: (domain, key) => {
      p.nvs.delete(domain, key);
      return [];
    },
    nvsKeys: (domain) => [p.nvs.keys(domain).join('\n')],
    flashOp: async (op, path, length) => [p.flashOp ? await p.flashOp(op, path, length) : -1],
    i2cWrite: (address, bytes) => {
      if (address !== SSD1306_ADDRESS || !p.panel) return [I2C_NACK];
      p.panel.write(bytes);
      return [0];
    },
    i2cRead: (address, length) => (address === SSD1306_ADDRESS && p.panel ? [0, new Uint8Array(length)] : [I2C_NACK, new Uint8Array(0)]),
  };
}
