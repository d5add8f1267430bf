// A bundle of the emulated SDK alone, for the emulation's own tests (test/firmware/sim-*.test.ts):
// every module on `globalThis.sdk`, host events dispatched as on a virtual board, and `report(value)`
// to hand a value to the test (it is read back with a `take` command).
import './globals.ts';
import { decodeFrame, encodeFrame, toArrayBuffer } from '../wire.ts';
import { dispatchEvent, type HostEvent } from './host.ts';
import * as http from './modules/http.ts';
import * as socket from './modules/socket.ts';
import WiFi from './modules/wifi.ts';
import Net from './modules/net.ts';
import Ethernet from './modules/ethernet.ts';
import Timer from './modules/timer.ts';
import Time from './modules/time.ts';
import SNTP from './modules/sntp.ts';
import * as file from './modules/file.ts';
import Preference from './modules/preference.ts';
import Resource from './modules/resource.ts';
import OTA from './modules/ota.ts';
import MQTT from './modules/mqtt.ts';
import SecureSocket from './modules/securesocket.ts';
import Serial from './modules/serial.ts';
import SSD1306 from './modules/ssd1306.ts';
import Bitmap from './modules/commodetto/Bitmap.ts';
import Poco from './modules/commodetto/Poco.ts';
import parseBMF from './modules/commodetto/parseBMF.ts';

const reports: unknown[] = [];
(globalThis as Record<string, unknown>).sdk = { http, socket, WiFi, Net, Ethernet, Timer, Time, SNTP, file, Preference, Resource, OTA, MQTT, SecureSocket, Serial, SSD1306, Bitmap, Poco, parseBMF };
(globalThis as Record<string, unknown>).report = (value: unknown) => void reports.push(value);

(globalThis as unknown as { handleCommand: (m: ArrayBuffer) => { result?: ArrayBuffer } }).handleCommand = (message) => {
  const frame = decodeFrame(new Uint8Array(message));
  const command = frame.json as { type: string; event?: HostEvent };
  const out: { result?: ArrayBuffer } = {};
  try {
    if (command.type === 'event') dispatchEvent(command.event!, frame.payload);
    const value = command.type === 'take' ? reports.splice(0) : null;
    out.result = toArrayBuffer(encodeFrame({ ok: true, value }));
  } catch (err) {
    out.result = toArrayBuffer(encodeFrame({ ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }));
  }
  return out;
};
