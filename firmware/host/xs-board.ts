// A board whose firmware runs inside the real XS engine (@agoric/xsnap's worker) while this Node
// process provides its peripherals: a flash folder, the fuse key (HMAC only: the key never enters
// XS), the clock and timers, HTTP listeners on distinct loopback addresses per interface, outgoing
// HTTP, display, event log and console, and (when given) a VirtualAir for SoftAPs and stations.
// Without an air the SoftAP only records its state and scans find nothing.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { FirmwareSettings } from '../src/core/settings.ts';
import type { Iface } from '../src/hal/network.ts';
import type { DeviceIdentity } from '../src/hal/system.ts';
import { decodeFrame, encodeFrame } from '../src/platform/xs-host/wire.ts';
import { bundleForXs } from '../xs/bundle.ts';
import { XsWorker, type MeterUsage } from '../xs/worker.ts';
import type { Position, VirtualAir } from './air.ts';
import { FlashFolder, type FlashFolderOptions } from './flash-folder.ts';
import { answerClientError, answerError, DEFAULT_INBOUND_LIMITS, HttpBridge, type InboundLimits } from './http-bridge.ts';

const ENTRY = fileURLToPath(new URL('../src/platform/xs-host/main.ts', import.meta.url));
let bundle: Promise<string> | undefined;

/** The firmware bundle for XS, built once per process. */
export function firmwareBundle(): Promise<string> {
  bundle ??= bundleForXs(ENTRY);
  return bundle;
}

export interface XsBoardOptions {
  identity: DeviceIdentity;
  fuseKeyHex: string;
  flashDir: string;
  /** Loopback addresses of the two interfaces' listeners (DESIGN.md section 6). */
  hosts?: Partial<Record<Iface, string>>;
  settings?: Partial<FirmwareSettings>;
  adminPassword?: string;
  clockSynchronized?: boolean;
  air?: VirtualAir;
  /** Start the engine but wait for boot() (a bench prepares the heap first). */
  deferBoot?: boolean;
  /** Where the board stands on the bench, in metres (range of its radios). */
  position?: Position;
  /** Called for every console line the firmware writes (a pseudo-terminal, a log). */
  onConsoleLine?: (line: string) => void;
  /** Called when the firmware asks for a reboot (the owner restarts the board). */
  onReboot?: (reason: string) => void;
  /** MQTT for the firmware (the bench's broker). */
  mqtt?: MqttBridge;
  /** Limits of the board's HTTP listeners (docs/board-http-limits.md); the defaults suit a bench. */
  httpLimits?: Partial<InboundLimits>;
  /** The flash folder's options (power-cut injection in tests). */
  flash?: FlashFolderOptions;
  /** The task watchdog's budget per command (default WATCHDOG_COMPUTRONS). */
  watchdogComputrons?: number;
}

/**
 * The task watchdog: a single command (a request, a timer, the boot with its target procedure) may
 * spend at most this many XS computrons; more means the firmware is stuck in a loop, and the engine
 * is stopped and the board reset, as an ESP32's task watchdog would. The heaviest legitimate command
 * measured (cloud retrieve of 512 KB) takes about 0.72 G (docs/firmware-bench.md).
 */
export const WATCHDOG_COMPUTRONS = 2_000_000_000;
/** More watchdog resets than this within WATCHDOG_WINDOW_MS: the board stays down (a boot loop). */
const WATCHDOG_MAX_RESETS = 5;
const WATCHDOG_WINDOW_MS = 60_000;

/** What a board's MQTT sessions go through: host-side clients to the bench's broker. */
export interface MqttBridge {
  connect(options: { host: string; port: number; clientId: string; username?: string; password?: string; ca?: string }): Promise<number>;
  publish(id: number, topic: string, payload: Uint8Array): Promise<void>;
  close(id: number): Promise<void>;
}

export interface MeterTotals {
  compute: number;
  allocate: number;
  commands: number;
}

export class XsBoard {
  readonly consoleLines: string[] = [];
  readonly displayHistory: string[][] = [];
  readonly events: { level: string; source: string; message: string }[] = [];
  readonly reboots: string[] = [];
  readonly urls: Partial<Record<Iface, string>> = {};
  clockSynchronized: boolean;
  clockOffsetMs = 0;
  softAp: { ssid: string; password: string; txPowerDbm: number } | null = null;
  bootResult: unknown;
  /**
   * Since the last resetMeter() (start() resets it just before booting): XS computrons summed over
   * every command, and the growth of the engine's heap (meterUsage.allocate) over its size then.
   */
  meter: MeterTotals = { compute: 0, allocate: 0, commands: 0 };
  private baselineAllocate = 0;
  private lastAllocate = 0;
  private worker!: XsWorker;
  private readonly flash: FlashFolder;
  private readonly http: HttpBridge;
  private readonly servers: Server[] = [];
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly fuseKey: Buffer;
  private closed = false;
  /** Set while a watchdog reset is under way; `down` once the board gave up (a boot loop). */
  private restarting: Promise<void> | undefined;
  private down = false;
  private readonly watchdogResets: number[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private stationMac: string;
  private stationTxDbm = 20;
  private association: { bssid: string } | null = null;
  position: Position;

  private constructor(private readonly o: XsBoardOptions) {
    this.fuseKey = Buffer.from(o.fuseKeyHex, 'hex');
    if (this.fuseKey.length !== 32) throw new Error('fuseKeyHex must be 32 bytes of hex');
    mkdirSync(o.flashDir, { recursive: true });
    this.flash = new FlashFolder(o.flashDir, o.flash);
    this.stationMac = o.identity.wifiMac;
    this.position = o.position ?? { x: 0, y: 0 };
    // On the SoftAP listener the sender is the one associated station (spec 2.5: one at a time).
    this.http = new HttpBridge(
      (command) => this.send(command),
      (iface) => (iface === 'softap' ? (o.air?.stationOf(bssidOf(o.identity.wifiMac)) ?? undefined) : undefined),
      { ...DEFAULT_INBOUND_LIMITS, ...o.httpLimits },
      () => !this.restarting && !this.down && !this.closed,
      (what) => this.hostLine(`request failed: ${what}`),
    );
    this.clockSynchronized = o.clockSynchronized ?? true;
  }

  static async start(o: XsBoardOptions): Promise<XsBoard> {
    const board = new XsBoard({ ...o, identity: { ...o.identity, firmwareVersion: installedVersion(o.flashDir) ?? o.identity.firmwareVersion } });
    await board.startEngine();
    if (!o.deferBoot) await board.boot();
    return board;
  }

  /** A fresh engine with the firmware loaded: its RAM is new, the flash and listeners are kept. */
  private async startEngine(): Promise<void> {
    this.worker = await XsWorker.start({
      name: this.o.identity.uuid,
      meteringLimit: this.o.watchdogComputrons ?? WATCHDOG_COMPUTRONS,
      handleCommand: (m) => this.onHostCall(m),
      onOutput: (line) => this.consoleLines.push(`XS ${line}`),
      onExit: (err) => void this.watchdogReset(err.message),
    });
    this.account((await this.worker.evaluate(await firmwareBundle())).meterUsage);
  }

  /**
   * The firmware died (stack overflow, out of memory, a stuck loop): reset the board as its
   * watchdog would. The radios go quiet and the RAM is lost; the flash, the listeners' addresses and
   * the console stay. Requests meanwhile get 503 with Retry-After. After WATCHDOG_MAX_RESETS resets
   * within a minute the board stays down, as a board in a boot loop is of no use to anyone.
   */
  private watchdogReset(reason: string): Promise<void> {
    if (this.closed || this.restarting) return this.restarting ?? Promise.resolve();
    const now = Date.now();
    while (this.watchdogResets.length > 0 && now - this.watchdogResets[0]! > WATCHDOG_WINDOW_MS) this.watchdogResets.shift();
    this.watchdogResets.push(now);
    const cause = /\(([^)]+)\)/.exec(reason)?.[1] ?? reason;
    this.reboots.push(`watchdog: ${cause}`);
    this.hostLine(`firmware fault (${cause}): watchdog reset`);
    this.restarting = (async () => {
      this.powerOffRadios();
      for (const t of this.timers.values()) clearTimeout(t);
      this.timers.clear();
      this.http.abortOutbound();
      if (this.watchdogResets.length > WATCHDOG_MAX_RESETS) {
        this.down = true;
        this.hostLine(`${this.watchdogResets.length} watchdog resets within ${WATCHDOG_WINDOW_MS / 1000} s: the board stays down`);
        return;
      }
      await this.worker.close();
      await this.startEngine();
      await this.boot();
    })()
      .catch((err: Error) => {
        this.down = true;
        this.hostLine(`restart failed: ${err.message}`);
      })
      .finally(() => {
        this.restarting = undefined;
      });
    return this.restarting;
  }

  /** Resolves once a watchdog reset under way (if any) has finished. */
  async settled(): Promise<void> {
    await this.restarting;
  }

  /** A line the host writes on the board's console (diagnostics a bench tester may read). */
  private hostLine(text: string): void {
    const line = `HOST ${text}`;
    this.consoleLines.push(line);
    this.o.onConsoleLine?.(line);
  }

  private powerOffRadios(): void {
    if (this.softAp) this.o.air?.stop(bssidOf(this.o.identity.wifiMac));
    this.softAp = null;
    if (this.association) this.o.air?.disconnect(this.association.bssid, this.stationMac);
    this.association = null;
    this.stationMac = this.o.identity.wifiMac;
    this.stationTxDbm = 20;
  }

  /** Boots the firmware (start() does it unless deferBoot); the meter restarts just before. */
  async boot(): Promise<unknown> {
    this.resetMeter();
    this.bootResult = await this.send({ type: 'boot', identity: this.o.identity, settings: this.o.settings ?? {}, adminPassword: this.o.adminPassword });
    return this.bootResult;
  }

  /** Evaluates a script in the engine beside the firmware (bench probes); metered like a command. */
  async evaluate(code: string): Promise<MeterUsage> {
    const { meterUsage } = await this.worker.evaluate(code);
    this.account(meterUsage);
    return meterUsage;
  }

  get identity(): DeviceIdentity {
    return this.o.identity;
  }

  get display(): string[] {
    return this.displayHistory[this.displayHistory.length - 1] ?? [];
  }

  /** Sends a command into the firmware and returns its answer (throws what the firmware threw). */
  async send(command: Record<string, unknown>): Promise<any> {
    if (this.closed) throw new Error(`board ${this.o.identity.uuid} is closed`);
    const pending = this.worker.issueCommand(encodeFrame(command));
    this.inFlight.add(pending);
    let result: Awaited<typeof pending>;
    try {
      result = await pending;
    } finally {
      this.inFlight.delete(pending);
    }
    const { reply, meterUsage } = result;
    this.account(meterUsage);
    const frame = decodeFrame(reply).json as { ok: boolean; value?: unknown; error?: string };
    if (!frame.ok) throw new Error(`firmware: ${frame.error}`);
    return frame.value;
  }

  /** Types a line on the serial console; resolves with the firmware's OK/ERR answer line. */
  async typeLine(line: string): Promise<string> {
    const before = this.consoleLines.length;
    await this.send({ type: 'console', line });
    const answer = this.consoleLines.slice(before).find((l) => l.startsWith('OK ') || l.startsWith('ERR '));
    if (!answer) throw new Error(`no answer to ${JSON.stringify(line)}`);
    return answer;
  }

  /**
   * Resolves when no command is in flight. An HTTP client has its whole answer before the command
   * that produced it has returned (and been metered), so measurements wait for this.
   */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Starts a new measurement: compute summed, allocate as growth over the heap size now. */
  resetMeter(): void {
    this.meter = { compute: 0, allocate: 0, commands: 0 };
    this.baselineAllocate = this.lastAllocate;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Power off: the radios go quiet with the board.
    this.powerOffRadios();
    await this.restarting;
    for (const t of this.timers.values()) clearTimeout(t);
    this.http.abortAll();
    await Promise.all(this.servers.map((s) => new Promise<void>((r) => (s.closeAllConnections(), s.close(() => r())))));
    await this.worker.close();
    this.flash.closeAll();
  }

  private account(m: MeterUsage): void {
    this.lastAllocate = m.allocate;
    this.meter.compute += m.compute;
    this.meter.allocate = Math.max(this.meter.allocate, m.allocate - this.baselineAllocate);
    this.meter.commands++;
  }

  /** The last 40 host calls ("<ms> <op>"), for diagnosing a board that seems stuck. */
  readonly trace: string[] = [];

  private async onHostCall(message: Uint8Array): Promise<Uint8Array> {
    const { json, payload } = decodeFrame(message);
    const call = json as { op: string } & Record<string, any>;
    this.trace.push(`${Date.now() % 100000} ${call.op}`);
    if (this.trace.length > 40) this.trace.shift();
    try {
      const out = await this.hostOp(call, payload);
      return encodeFrame({ ok: true, value: out?.value ?? null }, out?.payload);
    } catch (err) {
      return encodeFrame({ ok: false, error: err instanceof Error ? err.message : String(err) });
    }
  }

  private async hostOp(c: Record<string, any>, payload: Uint8Array): Promise<{ value?: unknown; payload?: Uint8Array } | void> {
    const fsOut = this.flash.op(c, payload);
    if (fsOut !== undefined) return fsOut;
    const httpOut = await this.http.op(c, payload);
    if (httpOut !== undefined) return httpOut;
    switch (c.op) {
      case 'clock.now':
        return { value: Date.now() + this.clockOffsetMs };
      case 'clock.synchronized':
        return { value: this.clockSynchronized };
      case 'timer.set': {
        const t = setTimeout(() => {
          this.timers.delete(c.id);
          if (!this.closed) this.send({ type: 'timer', id: c.id }).catch((err) => this.consoleLines.push(`HOST timer ${c.id} failed: ${err.message}`));
        }, c.delayMs);
        this.timers.set(c.id, t);
        return;
      }
      case 'timer.clear':
        clearTimeout(this.timers.get(c.id));
        this.timers.delete(c.id);
        return;
      case 'fuse.hmac':
        return { payload: createHmac('sha256', this.fuseKey).update(payload).digest() };
      case 'random':
        return { payload: randomBytes(c.n) };
      case 'net.listen':
        await this.listen(c.iface as Iface);
        return;
      case 'radio.bssid':
        return { value: bssidOf(this.o.identity.wifiMac) };
      case 'radio.softap.start':
        this.softAp = { ssid: c.ssid, password: c.password, txPowerDbm: c.txPowerDbm };
        this.o.air?.start({
          ssid: c.ssid,
          bssid: bssidOf(this.o.identity.wifiMac),
          password: c.password,
          auth: c.auth,
          txPowerDbm: c.txPowerDbm,
          maxStations: c.maxStations,
          channel: 6,
          position: () => this.position,
          gatewayUrl: () => this.urls.softap,
          associate: async (mac) => void (await this.send({ type: 'associated', mac })),
        });
        return;
      case 'radio.softap.stop':
        this.softAp = null;
        this.o.air?.stop(bssidOf(this.o.identity.wifiMac));
        return;
      case 'radio.scan':
        return { value: this.o.air?.scan(this.station()) ?? [] };
      case 'radio.connect': {
        if (!this.o.air) throw new Error(`no AP ${c.ssid} in range`);
        const joined = await this.o.air.connect({ ssid: c.ssid, password: c.password, bssid: c.bssid, station: this.station() });
        this.association = { bssid: joined.bssid };
        return { value: { gatewayUrl: joined.gatewayUrl } };
      }
      case 'radio.station.mac':
        this.stationMac = c.mac;
        return;
      case 'radio.disconnect':
        if (this.association) this.o.air?.disconnect(this.association.bssid, this.stationMac);
        this.association = null;
        return;
      case 'radio.txpower':
        this.stationTxDbm = c.dbm;
        return;
      case 'display.show':
        this.displayHistory.push(c.lines);
        return;
      case 'eventlog.append':
        this.events.push({ level: c.level, source: c.source, message: c.message });
        return;
      case 'console.write':
        this.consoleLines.push(c.line);
        this.o.onConsoleLine?.(c.line);
        return;
      case 'system.reboot':
        this.reboots.push(c.reason);
        if (this.o.onReboot) setImmediate(() => this.o.onReboot?.(c.reason));
        return;
      case 'ota.begin':
      case 'ota.write':
      case 'ota.finish':
      case 'ota.abort':
        return this.flash.ota(c.op, c, payload);
      case 'mqtt.connect':
        if (!this.o.mqtt) throw new Error('no MQTT broker is attached to this board');
        if (!this.association && !this.o.identity.ethernetMac) throw new Error('no network: the station is not associated');
        return { value: await this.o.mqtt.connect({ host: c.host, port: c.port, clientId: c.clientId, username: c.username, password: c.password, ca: c.ca }) };
      case 'mqtt.publish':
        if (!this.o.mqtt) throw new Error('no MQTT');
        await this.o.mqtt.publish(c.id, c.topic, payload);
        return;
      case 'mqtt.close':
        await this.o.mqtt?.close(c.id);
        return;
    }
    throw new Error(`unknown host call ${c.op}`);
  }

  private station(): { mac: string; position: Position; txPowerDbm: number } {
    return { mac: this.stationMac, position: this.position, txPowerDbm: this.stationTxDbm };
  }

  private async listen(iface: Iface): Promise<void> {
    // After a watchdog reset the interface keeps its address, as a board keeps its IP and port 80.
    if (this.urls[iface]) return;
    const host = this.o.hosts?.[iface] ?? DEFAULT_HOSTS[iface];
    const l = this.http.limits;
    const server = createServer(
      { maxHeaderSize: l.maxHeaderBytes, headersTimeout: l.headersTimeoutMs, requestTimeout: l.bodyTimeoutMs + l.headersTimeoutMs, keepAliveTimeout: 5000 },
      (req, res) => this.http.serve(iface, req, res),
    );
    server.timeout = l.idleTimeoutMs;
    server.on('checkContinue', (req, res) => this.http.serve(iface, req, res));
    server.on('checkExpectation', (req, res) => {
      answerError(res, 417, 'expectation_failed', `Only "Expect: 100-continue" is understood, not ${JSON.stringify(req.headers.expect)}`);
      req.resume();
    });
    server.on('clientError', answerClientError);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
    this.servers.push(server);
    this.urls[iface] = `http://${host}:${(server.address() as AddressInfo).port}`;
  }
}

/**
 * A virtual board "runs" the image installed by OTA: the bench's images are small JSON documents
 * naming their version ({"firmware_version": "YYYY.MM.bb"}), and the next boot reports it.
 */
export function installedVersion(flashDir: string): string | undefined {
  try {
    const v = (JSON.parse(readFileSync(join(flashDir, '.ota', 'boot.bin'), 'utf8')) as { firmware_version?: unknown }).firmware_version;
    return typeof v === 'string' && /^\d{4}\.\d{2}\.\d{2}$/.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Where each interface listens unless told otherwise: one loopback address per interface. */
const DEFAULT_HOSTS: Record<Iface, string> = { ethernet: '127.0.0.2', softap: '127.0.0.3', station: '127.0.0.4' };

/** An ESP32's SoftAP MAC is its station MAC + 1. */

export function bssidOf(wifiMac: string): string {
  const bytes = wifiMac.split(':').map((h) => parseInt(h, 16));
  bytes[5] = (bytes[5]! + 1) & 0xff;
  return bytes.map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
}
