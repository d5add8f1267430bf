// An in-memory platform: every HAL interface filled in with plain objects, portable (no Node APIs) so
// the same board runs the core's behaviour tests on Node and inside XS. Time is virtual: timers run
// when the test advances the clock. Boards share a MemoryAir for SoftAPs, scans and stations.
import type { Hal } from '../../hal/index.ts';
import type { ClientRequest, ClientResponse, HttpHandler, Iface } from '../../hal/network.ts';
import type { EventLevel } from '../../hal/output.ts';
import type { AppSlotInfo, DeviceIdentity, MqttOptions, OtaWriter } from '../../hal/system.ts';
import { hexDecode } from '../../core/bytes.ts';
import { createPureJsCrypto } from '../../core/crypto/pure.ts';
import { FlashEventLog } from '../../core/event-log.ts';
import { MemoryStorage } from './storage.ts';
import { ManualClock } from './clock.ts';
import { MemoryAir, MemoryRadio } from './air.ts';

/** The app slots of firmware/partitions.csv (3 MB each). */
const OTA_SLOT_BYTES = 0x300000;
/** What a memory board says of a chip heap it does not have: an ESP32-S3's free heap after boot, about. */
const MEMORY_BOARD_FREE_HEAP = 200 * 1024;

/** A deterministic byte source for tests (xorshift128+); never for a real board. */
export function seededRandom(seed: number): (length: number) => Uint8Array {
  let s0 = (seed >>> 0) || 1;
  let s1 = 0x9e3779b9 ^ s0;
  return (length) => {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i++) {
      let x = s0;
      const y = s1;
      s0 = y;
      x ^= x << 23;
      x ^= x >>> 17;
      x ^= y ^ (y >>> 26);
      s1 = x;
      out[i] = (s0 + s1) & 0xff;
    }
    return out;
  };
}

export interface MemoryBoardOptions {
  identity: DeviceIdentity;
  fuseKeyHex: string;
  air: MemoryAir;
  clock: ManualClock;
  storage?: MemoryStorage;
  seed?: number;
  /** Requests for URLs that are not a SoftAP of the air (the cloud, image servers). */
  internet?: (request: ClientRequest) => Promise<ClientResponse>;
  /** "host:port" of MQTT brokers this board can reach. */
  brokers?: Set<string>;
}

export interface MemoryBoard {
  hal: Hal;
  storage: MemoryStorage;
  radio: MemoryRadio;
  listeners: Map<Iface, HttpHandler>;
  display: { lines: string[]; history: string[][] };
  events: { time: number; level: EventLevel; source: string; message: string }[];
  consoleOut: string[];
  typeLine(line: string): void;
  reboots: string[];
  otaImages: { size: number; bytes: number; finished: boolean }[];
  /** Set by a case: finish() then refuses the image as a chip's security would (an Error with this code and message). */
  otaRefusal: { code?: 'signature_invalid' | 'secure_version_too_low'; message?: string };
  /** The running slot as esp_ota_ops would describe it (ota_0; its version is the identity's). */
  runningApp: AppSlotInfo;
  mqttSessions: MqttOptions[];
}

export function createMemoryBoard(o: MemoryBoardOptions): MemoryBoard {
  const storage = o.storage ?? new MemoryStorage();
  const crypto = createPureJsCrypto(seededRandom(o.seed ?? 1));
  const fuseKey = hexDecode(o.fuseKeyHex);
  const listeners = new Map<Iface, HttpHandler>();
  const radio = new MemoryRadio(o.air, o.identity, listeners);
  const display = { lines: [] as string[], history: [] as string[][] };
  const events: MemoryBoard['events'] = [];
  const consoleOut: string[] = [];
  const consoleHandlers: ((line: string) => void)[] = [];
  const reboots: string[] = [];
  const otaImages: MemoryBoard['otaImages'] = [];
  const otaRefusal: MemoryBoard['otaRefusal'] = {};
  // A model of the slots, not of the flash: no image is parsed here (the virtual boards do that).
  const runningApp: AppSlotInfo = { partition: 'ota_0', version: o.identity.firmwareVersion, projectName: '', state: 'valid', secureVersion: 0 };
  const mqttSessions: MqttOptions[] = [];
  const flashLog = new FlashEventLog(storage, () => o.clock.now());
  const hal: Hal = {
    storage,
    clock: o.clock,
    timers: o.clock,
    fuse: { hmac: (message) => crypto.hmacSha256(fuseKey, message) },
    crypto,
    network: {
      listen: (iface, handler) => void listeners.set(iface, handler), // heads are the platform's: this one takes none (its requests arrive whole)
      request: async (req) => {
        const viaAir = radio.route(req);
        if (viaAir) return viaAir;
        if (!o.internet) throw new Error(`no route to ${req.url}`);
        return o.internet(req);
      },
    },
    radio,
    display: {
      show: (lines) => {
        display.lines = lines.slice(0, 8);
        display.history.push(display.lines);
      },
    },
    // `events` is what a bench sees as the entries are written; the log itself is on the flash.
    eventLog: {
      append: (level, source, message) => {
        events.push({ time: o.clock.now(), level, source, message });
        flashLog.append(level, source, message);
      },
      recent: (count) => flashLog.recent(count),
    },
    console: {
      writeLine: (line) => void consoleOut.push(line),
      onLine: (handler) => void consoleHandlers.push(handler),
    },
    system: {
      identity: () => o.identity,
      reboot: (reason) => void reboots.push(reason),
      // A memory board's runs: each boot is a new board (power-on); its heaps are Node's, not a chip's.
      lastRun: () => ({ reason: 'power_on' }),
      heapReport: () => ({ chunk: 0, chunkPeak: 0, slots: 0, slotsPeak: 0, largestFreeBlock: MEMORY_BOARD_FREE_HEAP, minFreeHeap: MEMORY_BOARD_FREE_HEAP }),
      otaSlotBytes: () => OTA_SLOT_BYTES,
      runningApp: () => ({ ...runningApp }),
      lastInvalidApp: () => null,
      markAppValid: () => {
        if (runningApp.state !== 'pending_verify') return false;
        runningApp.state = 'valid';
        return true;
      },
      otaBegin: (size): OtaWriter => {
        const image = { size, bytes: 0, finished: false };
        otaImages.push(image);
        return {
          write: (chunk) => void (image.bytes += chunk.length),
          finish: () => {
            if (otaRefusal.code) throw Object.assign(new Error(otaRefusal.message ?? 'refused'), { code: otaRefusal.code });
            image.finished = true;
          },
          abort: () => void otaImages.splice(otaImages.indexOf(image), 1),
        };
      },
    },
    mqtt: {
      connect: async (options) => {
        if (!o.brokers?.has(`${options.host}:${options.port}`)) throw new Error(`MQTT broker ${options.host}:${options.port} unreachable`);
        mqttSessions.push(options);
        return { publish: async () => undefined, close: async () => undefined };
      },
    },
  };
  return {
    hal,
    storage,
    radio,
    listeners,
    display,
    events,
    consoleOut,
    typeLine: (line) => consoleHandlers.forEach((h) => h(line)),
    reboots,
    otaImages,
    otaRefusal,
    runningApp,
    mqttSessions,
  };
}
