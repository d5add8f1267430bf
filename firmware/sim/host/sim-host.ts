// The host side of the emulated Moddable SDK for one virtual board: answers the calls the emulated
// modules and natives make from XS (firmware/sim/xs/) and sends what happens later back as events.
// It owns the timers, the RTC's time base, SNTP, NVS, the UART's far end, the SSD1306 panel, the PSA
// crypto operations, the board's TCP (tcp.ts) and radios (radio.ts); the board (firmware/virtual-esp32/
// xs-board.ts) lends it the flash, the fuse key, OTA, MQTT and reboots.
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, type CipherGCM, type DecipherGCM, type Hash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { p256 } from '@noble/curves/nist.js';
import type { Position, VirtualAir } from '../../host/air.ts';
import { framebufferText } from './oled-text.ts';
import { macBytes, macString, SimRadio, type Iface } from './radio.ts';
import { SimTcp } from './tcp.ts';
import type { Socket as NetSocket } from 'node:net';

const RESOURCE_DIR = fileURLToPath(new URL('../../src/platform/moddable/font/', import.meta.url));
/** sntp.js: a retry every 5 s, an error after 5 tries. */
const SNTP_RETRY_MS = 5000;
const SNTP_TRIES = 5;
/** PSA operations a firmware may leave unfinished before the oldest are freed. */
const MAX_PSA_OPERATIONS = 64;

export type HostEvent = { kind: string; id?: number; [field: string]: unknown };
export type HostAnswer = { value?: unknown; payload?: Uint8Array } | undefined;

/** What the board lends the SDK emulation. */
export interface SimBoardSide {
  wifiMac: string;
  ethernetMac?: string;
  /** Loopback address of each interface. */
  addresses: Record<Iface, string>;
  air?: VirtualAir;
  position: () => Position;
  fuseKey: Buffer;
  /** Sends an event into the firmware (a command, queued behind others). */
  emit: (event: HostEvent, payload?: Uint8Array) => Promise<void>;
  /** The host's SNTP server: the time it answers, or null while it does not answer. */
  sntpTime: () => number | null;
  consoleLine: (line: string) => void;
  displayFrame: (lines: string[]) => void;
  restart: () => void;
  /** The platform's boot finished (its result) or failed (why). */
  booted: (outcome: { ok: true; value: unknown } | { ok: false; error: string }) => void;
  /** The flash folder's fs.* ops. */
  fs: (call: Record<string, any>, payload: Uint8Array) => HostAnswer;
  /** esp_ota_ops: ota.* ops. */
  ota: (call: Record<string, any>, payload: Uint8Array) => HostAnswer | void;
  mqttConnect: (o: { host: string; port: number; clientId: string; username?: string; password?: string; ca?: string }) => Promise<number>;
  mqttPublish: (session: number, topic: string, payload: Uint8Array) => Promise<void>;
  mqttClose: (session: number) => Promise<void>;
  /** A connection to a listener address while the firmware has none there. */
  refused: (iface: Iface | undefined, socket: NetSocket) => void;
  /** The board's URLs as listeners bind. */
  bound: (iface: Iface | undefined, url: string) => void;
}

type PsaOp = { kind: 'sha'; hash: Hash } | { kind: 'gcm-enc'; cipher: CipherGCM } | { kind: 'gcm-dec'; decipher: DecipherGCM };

export class SimHost {
  readonly tcp: SimTcp;
  readonly radio: SimRadio;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly nvs = new Map<string, unknown>();
  private readonly psa = new Map<number, PsaOp>();
  private readonly mqtt = new Map<number, number>();
  private nextPsa = 1;
  private bootedAt = performance.now();
  private serialLine: Buffer[] = [];
  private alive = true;

  constructor(private readonly b: SimBoardSide) {
    const ifaceOf = (address: string): Iface | undefined => (Object.entries(b.addresses) as [Iface, string][]).find(([, a]) => a === address)?.[0];
    this.tcp = new SimTcp({
      emit: (event) => void this.emit(event),
      onBound: (address, port) => {
        this.urls.set(address, `http://${address}:${port}`);
        b.bound(ifaceOf(address), `http://${address}:${port}`);
      },
      onRefused: (address, socket) => b.refused(ifaceOf(address), socket),
    });
    this.radio = new SimRadio({
      air: b.air,
      wifiMac: b.wifiMac,
      ...(b.ethernetMac ? { ethernetMac: b.ethernetMac } : {}),
      addresses: b.addresses,
      position: b.position,
      softApUrl: () => (this.tcpUrl(b.addresses.ap)),
      emit: (event) => this.emit(event),
    });
  }

  /** Each bound address's URL (an AP's gateway for its stations). */
  private readonly urls = new Map<string, string>();

  private tcpUrl(address: string): string | undefined {
    return this.urls.get(address);
  }

  /** Always after the current host call has answered: the engine is blocked until then. */
  private emit(event: HostEvent, payload?: Uint8Array): Promise<void> {
    return new Promise((resolve) =>
      setImmediate(() => {
        if (!this.alive) return resolve();
        // An event the engine could not take (it died, the board closed) is lost, as on a reset.
        this.b.emit(event, payload).then(resolve, () => resolve());
      }),
    );
  }

  /** A new engine starts (power on, reset): RAM-side state is new; flash, NVS and addresses stay. */
  engineStarted(): void {
    this.alive = true;
    this.bootedAt = performance.now();
  }

  /**
   * The engine stops (reset, power off): timers, connections, PSA operations and radios end with it.
   * `unanswered` takes the inbound connections that have no answer yet (SimTcp.resetAll).
   */
  engineStopped(unanswered?: (socket: NetSocket) => void): void {
    this.alive = false;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.tcp.resetAll(unanswered);
    this.radio.powerOff();
    this.psa.clear();
    for (const session of this.mqtt.values()) void this.b.mqttClose(session).catch(() => undefined);
    this.mqtt.clear();
    this.serialLine = [];
  }

  async close(): Promise<void> {
    this.engineStopped();
    await this.tcp.closeAll();
  }

  /** Answers one call from the emulated SDK; undefined when the op is not the SDK's. */
  async op(c: Record<string, any>, payload: Uint8Array): Promise<HostAnswer | null> {
    if (typeof c.op !== 'string') return null;
    if (c.op.startsWith('fs.')) return this.b.fs(c, payload) ?? {};
    if (c.op.startsWith('ota.')) return this.b.ota(c, payload) ?? {};
    switch (c.op) {
      // time, timer, sntp
      case 'clock.uptime':
        return { value: performance.now() - this.bootedAt };
      case 'timer.set': {
        clearTimeout(this.timers.get(c.id));
        const fire = () => void this.emit({ kind: 'timer', id: c.id }).catch(() => undefined);
        const t = c.repeat > 0
          ? setTimeout(function again(this: SimHost) {
              fire();
              this.timers.set(c.id, setTimeout(again.bind(this), c.repeat));
            }.bind(this), c.ms)
          : setTimeout(() => {
              this.timers.delete(c.id);
              fire();
            }, c.ms);
        this.timers.set(c.id, t);
        return {};
      }
      case 'timer.clear':
        clearTimeout(this.timers.get(c.id));
        this.timers.delete(c.id);
        return {};
      case 'sntp.request':
        this.sntp(c.id, 1);
        return {};
      // net, wifi, ethernet
      case 'net.get': {
        const iface = (c.iface === 'ap' || c.iface === 'station' || c.iface === 'ethernet' ? c.iface : 'station') as Iface;
        if (c.property === 'IP') return { value: this.radio.address(iface) };
        if (c.property === 'MAC') return { value: this.radio.mac(iface === 'ap' ? 'softap' : iface) };
        if (c.property === 'SSID') return { value: iface === 'ap' ? (this.radio.ap?.ssid ?? null) : null };
        if (c.property === 'BSSID') return { value: this.radio.association?.bssid ?? null };
        return { value: null };
      }
      case 'wifi.mode':
        if (c.mode !== undefined) this.radio.setMode(c.mode);
        return { value: this.radio.mode };
      case 'wifi.ap.start':
        this.radio.startAp(c as any);
        return {};
      case 'wifi.ap.wpa2':
        this.radio.wpa2Only();
        return {};
      case 'wifi.scan':
        this.radio.scan();
        return {};
      case 'wifi.connect':
        this.radio.connect(c as any);
        return {};
      case 'wifi.disconnect':
        this.radio.disconnect();
        return {};
      case 'wifi.txpower':
        return { value: this.radio.setTxPower(c.quarterDbm) };
      case 'wifi.station.mac':
        this.radio.stationMac = macString(payload);
        return {};
      case 'wifi.gateway':
        return { value: this.radio.association?.gateway ?? null };
      case 'wifi.stations':
        return { payload: Buffer.concat(this.radio.stations().map(macBytes)) };
      case 'wifi.station.for': {
        const mac = this.radio.stations()[0];
        return mac ? { value: true, payload: macBytes(mac) } : { value: false };
      }
      case 'wifi.deauth':
        return { value: this.radio.deauth(macString(payload)) };
      case 'ethernet.start':
        this.radio.startEthernet();
        return {};
      case 'ethernet.monitor':
        this.radio.ethernetMonitor();
        return {};
      case 'mac.read':
        return { payload: macBytes(this.radio.mac(c.kind)) };
      // socket
      case 'tcp.listen':
        await this.tcp.listen(c.id, c.address);
        return {};
      case 'tcp.unlisten':
        this.tcp.unlisten(c.id);
        return {};
      case 'tcp.accept':
        return { value: this.tcp.accept(c.listener) };
      case 'tcp.connect':
        this.tcp.connect(c.id, c.host, c.port, c.tls);
        return {};
      case 'tcp.read': {
        const r = this.tcp.read(c.id, c.max, c.until, c.discard);
        return { value: { count: r.count, rest: r.rest }, payload: r.bytes };
      }
      case 'tcp.write':
        return { value: this.tcp.write(c.id, payload) };
      case 'tcp.remote':
        return { value: this.tcp.remote(c.id) };
      case 'tcp.close':
        this.tcp.close(c.id);
        return {};
      // serial, display, resources, NVS
      case 'serial.write':
        this.serial(payload);
        return {};
      case 'display.init':
        return {};
      case 'display.frame':
        this.b.displayFrame(framebufferText(payload));
        return {};
      case 'resource.exists':
        return { value: this.resourcePath(c.name) !== null };
      case 'resource.read': {
        const path = this.resourcePath(c.name);
        if (!path) throw new Error(`resource ${c.name} not found`);
        return { payload: readFileSync(path) };
      }
      case 'nvs.get':
        return { value: this.nvs.get(`${c.domain}/${c.key}`) ?? null };
      case 'nvs.set':
        this.nvs.set(`${c.domain}/${c.key}`, c.value);
        return {};
      case 'nvs.delete':
        this.nvs.delete(`${c.domain}/${c.key}`);
        return {};
      case 'nvs.keys':
        return { value: [...this.nvs.keys()].filter((k) => k.startsWith(`${c.domain}/`)).map((k) => k.slice(c.domain.length + 1)) };
      // the platform's natives
      case 'fuse.hmac':
        return { payload: createHmac('sha256', this.b.fuseKey).update(payload).digest() };
      case 'app.booted':
        this.b.booted(c.ok ? { ok: true, value: c.value } : { ok: false, error: c.error });
        return {};
      case 'system.restart':
        this.b.restart();
        return {};
      case 'psa.sha256.create':
        return { value: this.psaAdd({ kind: 'sha', hash: createHash('sha256') }) };
      case 'psa.update': {
        const op = this.psaGet(c.handle);
        if (op.kind === 'sha') {
          op.hash.update(payload);
          return {};
        }
        const out = op.kind === 'gcm-enc' ? op.cipher.update(payload) : op.decipher.update(payload);
        if (out.length !== payload.length) throw new Error('GCM update gave output of another length'); // fw_crypto_gcm.c checks it too
        return { payload: out };
      }
      case 'psa.sha256.finish': {
        const op = this.psaTake(c.handle);
        if (op.kind !== 'sha') throw new Error('PSA_ERROR_BAD_STATE');
        return { payload: op.hash.digest() };
      }
      case 'psa.hmac':
        return { payload: createHmac('sha256', payload.subarray(0, c.keyLength)).update(payload.subarray(c.keyLength)).digest() };
      case 'psa.gcm.create': {
        const key = payload.subarray(0, c.keyLength);
        const iv = payload.subarray(c.keyLength, c.keyLength + c.ivLength);
        const aad = payload.subarray(c.keyLength + c.ivLength);
        if (c.encrypt) {
          const cipher = createCipheriv('aes-256-gcm', key, iv);
          cipher.setAAD(aad);
          return { value: this.psaAdd({ kind: 'gcm-enc', cipher }) };
        }
        const decipher = createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAAD(aad);
        return { value: this.psaAdd({ kind: 'gcm-dec', decipher }) };
      }
      case 'psa.gcm.finish': {
        const op = this.psaTake(c.handle);
        if (op.kind !== 'gcm-enc') throw new Error('PSA_ERROR_BAD_STATE');
        op.cipher.final();
        return { payload: op.cipher.getAuthTag() };
      }
      case 'psa.gcm.verify': {
        const op = this.psaTake(c.handle);
        if (op.kind !== 'gcm-dec') throw new Error('PSA_ERROR_BAD_STATE');
        try {
          op.decipher.setAuthTag(payload);
          op.decipher.final();
          return { value: true };
        } catch {
          return { value: false };
        }
      }
      case 'psa.p256.sign': {
        // PSA_ALG_DETERMINISTIC_ECDSA(PSA_ALG_SHA_256): RFC 6979, r || s.
        const key = payload.subarray(0, c.keyLength);
        return { payload: p256.sign(payload.subarray(c.keyLength), key, { prehash: true, lowS: false, format: 'compact' }) };
      }
      case 'psa.p256.public':
        return { payload: p256.getPublicKey(payload, false) };
      case 'psa.random':
        return { payload: randomBytes(c.length) };
      // mqtt
      case 'mqtt.connect':
        this.mqttConnect(c);
        return {};
      case 'mqtt.publish': {
        const session = this.mqtt.get(c.id);
        if (session === undefined) throw new Error('connection closed');
        this.b.mqttPublish(session, c.topic, Buffer.from(payload)).catch(() => this.mqttGone(c.id));
        return {};
      }
      case 'mqtt.close': {
        const session = this.mqtt.get(c.id);
        this.mqtt.delete(c.id);
        if (session !== undefined) void this.b.mqttClose(session).catch(() => undefined);
        return {};
      }
    }
    return null;
  }

  private sntp(id: number, attempt: number): void {
    setImmediate(() => {
      const time = this.b.sntpTime();
      if (time !== null) return void this.emit({ kind: 'sntp', id, message: 1, value: time / 1000 }).catch(() => undefined);
      if (attempt >= SNTP_TRIES) return void this.emit({ kind: 'sntp', id, message: -1, value: 'no answer' }).catch(() => undefined);
      const t = setTimeout(() => {
        this.timers.delete(-id);
        void this.emit({ kind: 'sntp', id, message: 2 }).catch(() => undefined);
        this.sntp(id, attempt + 1);
      }, SNTP_RETRY_MS);
      this.timers.set(-id, t);
    });
  }

  private serial(bytes: Uint8Array): void {
    let from = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== 0x0a) continue;
      this.serialLine.push(Buffer.from(bytes.subarray(from, i)));
      const line = Buffer.concat(this.serialLine).toString('utf8').replace(/\r$/, '');
      this.serialLine = [];
      this.b.consoleLine(line);
      from = i + 1;
    }
    if (from < bytes.length) this.serialLine.push(Buffer.from(bytes.subarray(from)));
  }

  private resourcePath(name: unknown): string | null {
    if (typeof name !== 'string' || !/^[A-Za-z0-9._-]+$/.test(name)) return null;
    const path = RESOURCE_DIR + name;
    return existsSync(path) ? path : null;
  }

  private psaAdd(op: PsaOp): number {
    const handle = this.nextPsa++;
    this.psa.set(handle, op);
    if (this.psa.size > MAX_PSA_OPERATIONS) this.psa.delete(this.psa.keys().next().value!);
    return handle;
  }

  private psaGet(handle: number): PsaOp {
    const op = this.psa.get(handle);
    if (!op) throw new Error('PSA_ERROR_BAD_STATE: no such operation');
    return op;
  }

  private psaTake(handle: number): PsaOp {
    const op = this.psaGet(handle);
    this.psa.delete(handle);
    return op;
  }

  private mqttConnect(c: Record<string, any>): void {
    const id = c.id as number;
    if (!this.radio.association && !this.radio.ethernetUp) {
      setImmediate(() => void this.emit({ kind: 'mqtt', id, message: 'close' }).catch(() => undefined));
      return;
    }
    this.b
      .mqttConnect({ host: c.host, port: c.port, clientId: c.clientId, ...(c.username ? { username: c.username } : {}), ...(c.password ? { password: c.password } : {}), ...(c.ca ? { ca: c.ca } : {}) })
      .then(
        (session) => {
          if (!this.alive) return void this.b.mqttClose(session).catch(() => undefined);
          this.mqtt.set(id, session);
          return this.emit({ kind: 'mqtt', id, message: 'ready' });
        },
        () => this.emit({ kind: 'mqtt', id, message: 'close' }),
      )
      .catch(() => undefined);
  }

  private mqttGone(id: number): void {
    if (!this.mqtt.delete(id)) return;
    void this.emit({ kind: 'mqtt', id, message: 'close' }).catch(() => undefined);
  }
}
