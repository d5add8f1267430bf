// The HAL inside XS on a virtual board: every peripheral is a synchronous call to the host process
// (bridge.ts), which owns the flash folder, the fuse key, the clock, the sockets and the radios.
// Events from the host (timers, incoming HTTP requests, console lines, associations) arrive as
// commands and are dispatched by main.ts through `inbound`.
import type { Hal } from '../../hal/index.ts';
import type { BodyReader, HttpHandler, HttpRequest, Iface } from '../../hal/network.ts';
import type { Storage } from '../../hal/storage.ts';
import type { AppSlotInfo, DeviceIdentity, OtaWriter } from '../../hal/system.ts';
import { createPureJsCrypto } from '../../core/crypto/pure.ts';
import { FlashEventLog } from '../../core/event-log.ts';
import { hostCall } from './bridge.ts';

export interface Inbound {
  timer(id: number): void;
  consoleLine(line: string): void;
  associated(mac: string): void;
  http(request: Omit<HttpRequest, 'body'> & { id: number }): Promise<void>;
}

/** The largest piece of a network body handed to the firmware at once, as a board's TCP buffers would. */
const NET_CHUNK_BYTES = 4096;

function bodyOf(id: number, op: string): BodyReader {
  let ended = false;
  return {
    async read() {
      if (ended) return null;
      const r = hostCall(op, { id, max: NET_CHUNK_BYTES });
      if (r.value?.end) {
        ended = true;
        return null;
      }
      return r.payload.slice();
    },
  };
}

export function createXsHostHal(identity: DeviceIdentity): { hal: Hal; inbound: Inbound } {
  const timers = new Map<number, () => void>();
  let nextTimer = 1;
  const consoleHandlers: ((line: string) => void)[] = [];
  const associationHandlers: ((mac: string) => void)[] = [];
  const listeners = new Map<Iface, HttpHandler>();
  const now = () => hostCall('clock.now').value as number;

  // The flash folder of the host (firmware/host/flash-folder.ts).
  const storage: Storage = {
    size: (path) => hostCall('fs.size', { path }).value as number | null,
    read: (path, offset, length) => hostCall('fs.read', { path, offset, length }).payload.slice(),
    create: (path) => {
      const handle = hostCall('fs.create', { path }).value as number;
      return {
        write: (chunk) => void hostCall('fs.write', { handle }, chunk),
        close: () => void hostCall('fs.close', { handle }),
      };
    },
    rename: (from, to) => void hostCall('fs.rename', { from, to }),
    remove: (path) => hostCall('fs.remove', { path }).value as boolean,
    list: (folder) => hostCall('fs.list', { folder }).value as string[],
  };
  const eventLog = new FlashEventLog(storage, now);

  const hal: Hal = {
    storage,
    clock: { now, synchronized: () => hostCall('clock.synchronized').value as boolean },
    timers: {
      setTimeout: (callback, delayMs) => {
        const id = nextTimer++;
        timers.set(id, callback);
        hostCall('timer.set', { id, delayMs });
        return id;
      },
      clearTimeout: (id) => {
        if (timers.delete(id)) hostCall('timer.clear', { id });
      },
    },
    fuse: { hmac: (message) => hostCall('fuse.hmac', {}, message).payload.slice() },
    crypto: createPureJsCrypto((n) => hostCall('random', { n }).payload.slice()),
    network: {
      listen: (iface, handler) => {
        listeners.set(iface, handler);
        hostCall('net.listen', { iface });
      },
      request: async (req) => {
        const length = req.body instanceof Uint8Array ? req.body.length : (req.bodyLength ?? 0);
        const id = hostCall('net.open', { method: req.method, url: req.url, headers: req.headers, bodyLength: req.body === undefined ? 0 : length, timeoutMs: req.timeoutMs ?? 30_000 }).value as number;
        if (req.body instanceof Uint8Array) {
          if (req.body.length > 0) hostCall('net.write', { id }, req.body);
        } else if (req.body) {
          for (let c = await req.body.read(); c !== null; c = await req.body.read()) hostCall('net.write', { id }, c);
        }
        const head = hostCall('net.send', { id }).value as { status: number; headers: Record<string, string> };
        return { status: head.status, headers: head.headers, body: bodyOf(id, 'net.read') };
      },
    },
    radio: {
      softApBssid: () => hostCall('radio.bssid').value as string,
      startSoftAp: async (config) => void hostCall('radio.softap.start', { ...config }),
      stopSoftAp: async () => void hostCall('radio.softap.stop'),
      onStationAssociated: (handler) => void associationHandlers.push(handler),
      scan: async () => hostCall('radio.scan').value,
      setStationMac: (mac) => void hostCall('radio.station.mac', { mac }),
      setTxPowerDbm: (dbm) => void hostCall('radio.txpower', { dbm }),
      connect: async (o) => hostCall('radio.connect', { ...o }).value,
      disconnect: async () => void hostCall('radio.disconnect'),
    },
    display: { show: (lines) => void hostCall('display.show', { lines }) },
    // The host sees each entry as it is written (a bench reads it); the log itself is on the flash.
    eventLog: {
      append: (level, source, message) => {
        hostCall('eventlog.append', { level, source, message });
        eventLog.append(level, source, message);
      },
      recent: (count) => eventLog.recent(count),
    },
    console: {
      writeLine: (line) => void hostCall('console.write', { line }),
      onLine: (handler) => void consoleHandlers.push(handler),
    },
    // identity.firmwareVersion is the running image's esp_app_desc_t version: the host's boot stage
    // read it from the slot it booted. OTA goes to the host's esp_ota_ops (firmware/host/ota-slots.ts).
    system: {
      identity: () => identity,
      reboot: (reason) => void hostCall('system.reboot', { reason }),
      runningApp: () => hostCall('ota.running').value as AppSlotInfo,
      lastInvalidApp: () => hostCall('ota.lastInvalid').value as AppSlotInfo | null,
      markAppValid: () => hostCall('ota.markValid').value as boolean,
      otaBegin: (size): OtaWriter => {
        hostCall('ota.begin', { size });
        return {
          write: (chunk) => void hostCall('ota.write', {}, chunk),
          finish: () => void hostCall('ota.finish'),
          abort: () => void hostCall('ota.abort'),
        };
      },
    },
    mqtt: {
      connect: async (options) => {
        const id = hostCall('mqtt.connect', { ...options }).value as number;
        return {
          publish: async (topic, payload) => void hostCall('mqtt.publish', { id, topic }, payload),
          close: async () => void hostCall('mqtt.close', { id }),
        };
      },
    },
  };

  const inbound: Inbound = {
    timer(id) {
      const callback = timers.get(id);
      timers.delete(id);
      callback?.();
    },
    consoleLine: (line) => consoleHandlers.forEach((h) => h(line)),
    associated: (mac) => associationHandlers.forEach((h) => h(mac)),
    async http(r) {
      const handler = listeners.get(r.iface);
      const res = handler
        ? await handler({ ...r, body: bodyOf(r.id, 'http.read') })
        : { status: 503, headers: { 'content-length': '0' } };
      hostCall('http.head', { id: r.id, status: res.status, headers: res.headers });
      if (res.body instanceof Uint8Array) {
        if (res.body.length > 0) hostCall('http.write', { id: r.id }, res.body);
      } else if (res.body) {
        for (let c = await res.body.read(); c !== null; c = await res.body.read()) hostCall('http.write', { id: r.id }, c);
      }
      hostCall('http.end', { id: r.id });
    },
  };
  return { hal, inbound };
}
