// A board whose firmware runs inside the real XS engine (@agoric/xsnap's worker) while this Node
// process provides its peripherals: the SPI flash (one image file: bootloader, partition table,
// otadata, two app slots; the storage partition's file system a folder beside it), the fuse key
// (HMAC only: the key never enters XS), the clock and timers, HTTP listeners on distinct loopback
// addresses per interface, outgoing HTTP, display, event log and console, and (when given) a
// VirtualAir for SoftAPs and stations. Without an air the SoftAP only records its state and scans
// find nothing.
//
// It starts as an ESP32-S3 does (docs/flash-and-boot.md): the ROM and ESP-IDF's bootloader pick
// and verify an app slot (boot-stage.ts) and the XS bundle of that image runs; its esp_app_desc_t
// gives the firmware its version. A new board's flash is programmed as the factory would, with the
// image of identity.firmwareVersion. Every reset (watchdog, a crash at start, a reboot the owner
// performs) goes through the bootloader again, so an image still PENDING_VERIFY rolls back.
import { mkdirSync } from 'node:fs';
import { chipByName, type ChipName, type ChipSpec } from '../image/chips.ts';
import type { FirmwareSettings } from '../src/core/settings.ts';
import type { Iface } from '../src/hal/network.ts';
import type { DeviceIdentity } from '../src/hal/system.ts';
import { decodeFrame, encodeFrame } from '../sim/wire.ts';
import { XsWorker, type MeterUsage } from '../xs/worker.ts';
import type { Position, VirtualAir } from './air.ts';
import { BootLog, type ResetReason } from './boot-log.ts';
import { BootFailure, runBootloader, type BootedApp } from './boot-stage.ts';
import { flashFactoryImages } from './factory-flash.ts';
import { DEFAULT_CHIP, DEFAULT_FLASH_BYTES, firmwareImage, productPartitions } from './firmware-image.ts';
import { SimHost } from '../sim/host/sim-host.ts';
import type { Socket as NetSocket } from 'node:net';
import { FlashFolder, type FlashFolderOptions } from './flash-folder.ts';
import { FlashImage } from './flash-image.ts';
import type { ListenerLimits } from '../src/platform/moddable/hal/http-limits.ts';
import { OtaSlots, type OtaUpdate } from './ota-slots.ts';

export { firmwareBundle } from './firmware-image.ts';
export { BootFailure } from './boot-stage.ts';

export interface XsBoardOptions {
  /** identity.firmwareVersion is only the version the factory flashes on a new board; after that the running image's descriptor says. */
  identity: DeviceIdentity;
  fuseKeyHex: string;
  /** The storage partition's file system (backup, records, event log): a folder. */
  flashDir: string;
  /** The flash image file (default: `<flashDir>.bin`, beside the folder); created and factory-programmed when missing. */
  flashImage?: string;
  /** Default 8 MB (ESP32-S3-DevKitC-1-N8); the rig may say otherwise. */
  flashSizeBytes?: number;
  /** Default esp32s3. */
  chip?: ChipName;
  /** Why the chip starts: the ROM banner's rst: line (default poweron). */
  reset?: ResetReason;
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
  /**
   * Limits of the board's HTTP listeners (docs/board-http-limits.md): the build's config "http"
   * (mc/config), as a test build sets them; unset, the platform's BOARD_HTTP_LIMITS.
   */
  httpLimits?: Partial<ListenerLimits>;
  /** The flash folder's options (power-cut injection in tests). */
  flash?: FlashFolderOptions;
  /** The task watchdog's budget per command (default WATCHDOG_COMPUTRONS). */
  watchdogComputrons?: number;
  /**
   * Collect garbage before every command, so that the engine's slot count at a command's end
   * (meterUsage.currentHeapCount) bounds the slots live during it (meter.slotPeak; the firmware
   * bench). Costs a collection per command.
   */
  slotMeter?: boolean;
  /** With slotMeter: called with the live slots after each collection and the command about to run. */
  onSlotSample?: (liveSlots: number, command: Record<string, unknown>) => void;
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
/** How long typeLine waits for a console command's OK/ERR line. */
const TYPE_LINE_TIMEOUT_MS = 30_000;
const WATCHDOG_WINDOW_MS = 60_000;
/** How long a started board waits for its Ethernet listener (the link and DHCP are immediate here). */
const ETHERNET_UP_MS = 5_000;

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
  /** With slotMeter: live slots after the first collection of the measurement. */
  slotsAtStart: number;
  /** With slotMeter: the most slots live between commands (after a collection): a lower bound of the peak. */
  slotLive: number;
  /** With slotMeter: the largest slot count at a command's end (live at its start + all it allocated, garbage included): an upper bound. */
  slotPeak: number;
}

export class XsBoard {
  readonly consoleLines: string[] = [];
  readonly displayHistory: string[][] = [];
  readonly events: { level: string; source: string; message: string }[] = [];
  readonly reboots: string[] = [];
  readonly urls: Partial<Record<Iface, string>> = {};
  clockSynchronized: boolean;
  clockOffsetMs = 0;

  /** The SoftAP on the air now (its SSID, passphrase and TX power), or null. */
  get softAp(): { ssid: string; password: string; txPowerDbm: number } | null {
    const ap = this.sim.radio.ap;
    return ap?.inAir ? { ssid: ap.ssid, password: ap.password ?? '', txPowerDbm: this.sim.radio.txPowerDbm } : null;
  }
  bootResult: unknown;
  /**
   * Since the last resetMeter() (start() resets it just before booting): XS computrons summed over
   * every command, and the growth of the engine's heap (meterUsage.allocate) over its size then.
   */
  meter: MeterTotals = { compute: 0, allocate: 0, commands: 0, slotsAtStart: -1, slotLive: 0, slotPeak: 0 };
  private baselineAllocate = 0;
  private lastAllocate = 0;
  private worker!: XsWorker;
  private readonly flash: FlashFolder;
  private readonly chip: ChipSpec;
  private spi: FlashImage | undefined;
  private app: BootedApp | undefined;
  private ota: OtaSlots | undefined;
  private otaUpdate: OtaUpdate | null = null;
  private identityNow: DeviceIdentity;
  /** Set while the ROM, the bootloader and the app's start run: those handle their own faults. */
  private starting = false;
  private readonly fuseKey: Buffer;
  private closed = false;
  /** Set while a watchdog reset is under way; `down` once the board gave up (a boot loop). */
  private restarting: Promise<void> | undefined;
  private down = false;
  private readonly watchdogResets: number[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  /** The emulated Moddable SDK's host side: sockets, timers, radios, natives (firmware/sim/host). */
  private readonly sim: SimHost;
  private lastRestartReason: string | undefined;
  private bootAbort: ((err: Error) => void) | undefined;
  private bootWaiter: ((outcome: { ok: true; value: unknown } | { ok: false; error: string }) => void) | undefined;
  position: Position;

  private constructor(private readonly o: XsBoardOptions) {
    this.chip = chipByName(o.chip ?? DEFAULT_CHIP);
    this.identityNow = { ...o.identity };
    this.fuseKey = Buffer.from(o.fuseKeyHex, 'hex');
    if (this.fuseKey.length !== 32) throw new Error('fuseKeyHex must be 32 bytes of hex');
    mkdirSync(o.flashDir, { recursive: true });
    this.flash = new FlashFolder(o.flashDir, o.flash);
    this.position = o.position ?? { x: 0, y: 0 };
    this.clockSynchronized = o.clockSynchronized ?? true;
    this.sim = this.simHost();
  }

  private simHost(): SimHost {
    const o = this.o;
    const hosts = { ...DEFAULT_HOSTS, ...o.hosts };
    return new SimHost({
      wifiMac: o.identity.wifiMac,
      ...(o.identity.ethernetMac ? { ethernetMac: o.identity.ethernetMac } : {}),
      addresses: { ethernet: hosts.ethernet, ap: hosts.softap, station: hosts.station },
      ...(o.air ? { air: o.air } : {}),
      position: () => this.position,
      fuseKey: this.fuseKey,
      emit: (event, payload) => this.send({ type: 'event', event }, payload).then(() => undefined),
      sntpTime: () => (this.clockSynchronized ? Date.now() + this.clockOffsetMs : null),
      consoleLine: (line) => {
        // The event log as a bench reads it from a board's console (core/console/console.ts).
        const logged = /^LOG (\w+) ([\w-]+): (.*)$/.exec(line);
        if (logged) this.events.push({ level: logged[1]!.toLowerCase(), source: logged[2]!, message: logged[3]! });
        const restart = /^LOG \w+ board: restart: (.*)$/.exec(line);
        if (restart) this.lastRestartReason = restart[1];
        this.consoleLine(line);
      },
      displayFrame: (lines) => this.displayHistory.push(lines),
      booted: (outcome) => this.bootWaiter?.(outcome),
      restart: () => {
        const reason = this.lastRestartReason ?? 'esp_restart';
        this.lastRestartReason = undefined;
        this.reboots.push(reason);
        if (this.o.onReboot) setImmediate(() => this.o.onReboot?.(reason));
      },
      fs: (c, payload) => this.flash.op(c, payload),
      ota: (c, payload) => this.otaOp(c.op, c, payload),
      mqttConnect: (c) => {
        if (!this.o.mqtt) return Promise.reject(new Error('no MQTT broker is attached to this board'));
        return this.o.mqtt.connect(c);
      },
      mqttPublish: (id, topic, payload) => this.o.mqtt!.publish(id, topic, payload),
      mqttClose: async (id) => this.o.mqtt?.close(id),
      refused: (iface, socket) => this.refuse(socket),
      bound: (iface, url) => {
        if (!iface) return;
        const key: Iface = iface === 'ap' ? 'softap' : iface;
        this.urls[key] = url;
        // Port 80 is a loopback listener on another port here: said on the console before the
        // firmware's own "listening on <address>:80" line, for a console reader (harness/serial-board.ts).
        this.hostLine(`${key}: listening on ${url.replace(/^http:\/\//, '')}`);
      },
    });
  }

  /**
   * A connection to one of the board's addresses while its firmware has no listener there: refused
   * (RST), as lwIP does; while the board restarts, the bench's stand-in answers 503 with Retry-After
   * so that a client can tell a restart from a dead board (docs/board-http-limits.md).
   */
  private refuse(socket: NetSocket): void {
    if (this.restarting || this.starting || this.down) return answerRestarting(socket);
    socket.destroy();
  }

  /**
   * Powers the board on: factory flash on a new board, ROM, bootloader, the chosen image's bundle in
   * a new engine, then (unless deferBoot) the firmware's boot. Throws BootFailure when no slot holds
   * a bootable image (the console says why) or the image fails at every start.
   */
  static async start(o: XsBoardOptions): Promise<XsBoard> {
    const board = new XsBoard(o);
    try {
      await board.powerOn(o.reset ?? 'poweron');
    } catch (err) {
      await board.close();
      throw err;
    }
    if (!o.deferBoot) await board.boot();
    return board;
  }

  private async powerOn(reset: ResetReason): Promise<void> {
    this.spi = FlashImage.open(this.o.flashImage ?? `${this.o.flashDir}.bin`, this.o.flashSizeBytes ?? DEFAULT_FLASH_BYTES);
    if (this.spi.created) {
      flashFactoryImages(this.spi, { chip: this.chip, table: productPartitions(), app: await firmwareImage(this.o.identity.firmwareVersion, { chip: this.chip }) });
    }
    await this.runFromFlash(reset);
  }

  /**
   * ROM and bootloader choose and verify a slot; its bundle is loaded in a new engine. An app that
   * fails while starting (its script throws, the engine dies) resets the chip, as abort() would,
   * and the bootloader runs again: a new image still PENDING_VERIFY is rolled back then.
   */
  private async runFromFlash(reset: ResetReason): Promise<void> {
    this.starting = true;
    try {
      for (;;) {
        const log = new BootLog((line) => this.consoleLine(line));
        const app = runBootloader(this.spi!, log, { chip: this.chip, reset });
        this.app = app;
        this.ota = new OtaSlots(this.spi!, app.table, this.chip, app.partition);
        this.identityNow = { ...this.o.identity, firmwareVersion: app.descriptor.version };
        this.appStartLines(app, log);
        try {
          await this.startEngine(app.bundle);
          return;
        } catch (err) {
          const cause = err instanceof Error ? err.message : String(err);
          this.reboots.push(`panic: ${cause}`);
          this.hostLine(`firmware fault (the app failed to start: ${cause}): reset`);
          await this.worker?.close().catch(() => undefined);
          if (this.tooManyResets()) throw new BootFailure(`the app in ${app.partition.name} fails at every start`);
          reset = 'panic';
        }
      }
    } finally {
      this.starting = false;
    }
  }

  /** What ESP-IDF's app_init prints about the image (esp_app_desc_t) before the app runs. */
  private appStartLines(app: BootedApp, log: BootLog): void {
    const d = app.descriptor;
    log.info('app_init', 'Application information:');
    log.info('app_init', `Project name:     ${d.projectName}`);
    log.info('app_init', `App version:      ${d.version}`);
    log.info('app_init', `Compile time:     ${d.date} ${d.time}`);
    log.info('app_init', `ELF file SHA256:  ${d.elfSha256.slice(0, 16)}...`);
    log.info('app_init', `ESP-IDF:          ${d.idfVersion}`);
  }

  /** Counts a reset; true when the board now stays down (more than WATCHDOG_MAX_RESETS within a minute). */
  private tooManyResets(): boolean {
    const now = Date.now();
    while (this.watchdogResets.length > 0 && now - this.watchdogResets[0]! > WATCHDOG_WINDOW_MS) this.watchdogResets.shift();
    this.watchdogResets.push(now);
    if (this.watchdogResets.length <= WATCHDOG_MAX_RESETS) return false;
    this.down = true;
    this.hostLine(`${this.watchdogResets.length} watchdog resets within ${WATCHDOG_WINDOW_MS / 1000} s: the board stays down`);
    return true;
  }

  /** A fresh engine with the firmware loaded: its RAM is new, the flash and listeners are kept. */
  private async startEngine(bundle: string): Promise<void> {
    this.sim.engineStopped();
    this.worker = await XsWorker.start({
      name: this.o.identity.uuid,
      meteringLimit: this.o.watchdogComputrons ?? WATCHDOG_COMPUTRONS,
      handleCommand: (m) => this.onHostCall(m),
      onOutput: (line) => this.consoleLines.push(`XS ${line}`),
      onExit: (err) => void (this.starting ? undefined : this.watchdogReset(err.message)),
    });
    this.sim.engineStarted();
    this.account((await this.worker.evaluate(bundle)).meterUsage);
  }

  /**
   * The firmware died (stack overflow, out of memory, a stuck loop): reset the board as its
   * watchdog would. The radios go quiet and the RAM is lost; the flash, the listeners' addresses and
   * the console stay. Requests meanwhile get 503 with Retry-After. After WATCHDOG_MAX_RESETS resets
   * within a minute the board stays down, as a board in a boot loop is of no use to anyone.
   */
  private watchdogReset(reason: string): Promise<void> {
    if (this.closed || this.restarting) return this.restarting ?? Promise.resolve();
    const cause = /\(([^)]+)\)/.exec(reason)?.[1] ?? reason;
    this.reboots.push(`watchdog: ${cause}`);
    const abort = this.bootAbort;
    this.bootAbort = undefined;
    if (this.bootWaiter) abort?.(new Error(`the engine died while booting: ${cause}`));
    this.hostLine(`firmware fault (${cause}): watchdog reset`);
    this.restarting = (async () => {
      // The radios go quiet with the engine. A request in flight has no answer from the dead
      // engine: the stand-in answers it as it answers new ones.
      this.sim.engineStopped(answerRestarting);
      this.otaUpdate = null;
      if (this.tooManyResets()) return;
      await this.worker.close();
      // Through the bootloader again: a new image that crashed before confirming itself rolls back.
      await this.runFromFlash('watchdog');
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
    this.consoleLine(`HOST ${text}`);
  }

  /** A line on the board's UART: the ROM, the bootloader, the host's diagnostics. */
  private consoleLine(line: string): void {
    this.consoleLines.push(line);
    this.o.onConsoleLine?.(line);
  }

  /**
   * Boots the firmware (start() does it unless deferBoot); the meter restarts just before. When the
   * engine dies during the boot, the watchdog resets the board and this resolves with the boot of
   * the image the bootloader then chose (a new image that crashed is rolled back).
   */
  async boot(): Promise<unknown> {
    this.resetMeter();
    try {
      this.bootResult = await this.bootModdable();
      await this.quiet();
      if (await this.ethernetListening()) await this.quiet(); // the command that bound it also logs it
    } catch (err) {
      if (!this.restarting) throw err;
      await this.restarting;
      if (this.down) throw new BootFailure(`board ${this.o.identity.uuid} is down: ${err instanceof Error ? err.message : String(err)}`);
    }
    return this.bootResult;
  }

  /**
   * Starts platform/moddable and waits for its boot to end (it spans many commands: the scan, the
   * Ethernet link, SNTP); a watchdog reset meanwhile rejects, and boot() waits for the restart.
   */
  private bootModdable(): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const dead = (err: Error) => {
        this.bootWaiter = undefined;
        reject(err);
      };
      this.bootWaiter = (outcome) => {
        this.bootWaiter = undefined;
        if (outcome.ok) resolve(outcome.value);
        else reject(new Error(`firmware: ${outcome.error}`));
      };
      this.bootAbort = dead;
      this.send({ type: 'boot', config: this.buildConfig(), settings: this.o.settings ?? {}, adminPassword: this.o.adminPassword }).catch(dead);
    });
  }

  /**
   * The build configuration of a board running platform/moddable (its manifest's "config", which a
   * real board has compiled in): who it is; its MACs come from the chip, its version from the image.
   */
  private buildConfig(): Record<string, unknown> {
    const id = this.o.identity;
    return { role: id.role, hardware_class: id.hardwareClass, product_hex: id.productHex, uuid: id.uuid, build: id.build, crypto: 'psa', ethernet: id.role === 'controller' && !!id.ethernetMac, display: true, http: this.o.httpLimits ?? {} };
  }

  /**
   * Resolves once the reports that the last command started have been delivered (the Ethernet
   * link and its address after a boot, the listeners bound) and nothing is in flight.
   */
  private async quiet(): Promise<void> {
    for (let rounds = 0; rounds < 50; rounds++) {
      await new Promise((r) => setImmediate(r));
      if (this.inFlight.size === 0) return;
      await this.idle();
    }
  }

  /**
   * A controller's boot may end before its Ethernet link is up (a configured board does not scan):
   * waits, at most ETHERNET_UP_MS, until its listener is bound, so that a started or reset board
   * answers on Ethernet as a board that finished its start does. True when it had to wait.
   */
  private async ethernetListening(): Promise<boolean> {
    if (!this.buildConfig().ethernet) return false;
    const address = this.hostOf('ethernet');
    if (this.sim.tcp.listening(address)) return false;
    const until = Date.now() + ETHERNET_UP_MS;
    while (!this.sim.tcp.listening(address) && Date.now() < until && !this.closed) await new Promise((r) => setTimeout(r, 5));
    return true;
  }

  /** Whether the firmware listens on the interface now (the SoftAP's listener exists only while the SoftAP is up). */
  listening(iface: Iface): boolean {
    return this.sim.tcp.listening(this.hostOf(iface));
  }

  private hostOf(iface: Iface): string {
    return this.o.hosts?.[iface] ?? DEFAULT_HOSTS[iface];
  }

  /** The image running now: its slot and esp_app_desc_t. */
  get runningImage(): BootedApp | undefined {
    return this.app;
  }

  /** Evaluates a script in the engine beside the firmware (bench probes); metered like a command. */
  async evaluate(code: string): Promise<MeterUsage> {
    const { meterUsage } = await this.worker.evaluate(code);
    this.account(meterUsage);
    return meterUsage;
  }

  /** The board's identity; firmwareVersion is the running image's. */
  get identity(): DeviceIdentity {
    return this.identityNow;
  }

  get display(): string[] {
    return this.displayHistory[this.displayHistory.length - 1] ?? [];
  }

  /** Sends a command into the firmware and returns its answer (throws what the firmware threw). */
  async send(command: Record<string, unknown>, payload?: Uint8Array): Promise<any> {
    if (this.closed) throw new Error(`board ${this.o.identity.uuid} is closed`);
    if (this.o.slotMeter) {
      const live = await this.collectGarbage();
      this.o.onSlotSample?.(live, command);
    }
    const pending = this.worker.issueCommand(encodeFrame(command, payload));
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
    const find = () => this.consoleLines.slice(before).find((l) => l.startsWith('OK ') || l.startsWith('ERR '));
    // On platform/moddable a command may answer after later events (its UART output, the network).
    const until = Date.now() + TYPE_LINE_TIMEOUT_MS;
    while (!find() && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    const answer = find();
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
    this.meter = { compute: 0, allocate: 0, commands: 0, slotsAtStart: -1, slotLive: 0, slotPeak: 0 };
    this.baselineAllocate = this.lastAllocate;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.restarting;
    // Power off: the radios, timers and connections end with the engine.
    await this.sim.close();
    await this.worker?.close();
    this.flash.closeAll();
    this.spi?.close();
  }

  /**
   * gc() in the engine: afterwards currentHeapCount is the live slots (not metered as a command).
   * Through the firmware's handleCommand (an empty command, sim/xs/runtime.ts), not `evaluate`:
   * each evaluated script keeps one slot alive while promises are pending (docs/xs-engine.md), so
   * an evaluate before every command would add a slot per command to what is measured.
   */
  private async collectGarbage(): Promise<number> {
    const { meterUsage } = await this.worker.issueCommand(new Uint8Array(0));
    this.lastAllocate = meterUsage.allocate;
    if (this.meter.slotsAtStart < 0) this.meter.slotsAtStart = meterUsage.currentHeapCount;
    this.meter.slotLive = Math.max(this.meter.slotLive, meterUsage.currentHeapCount);
    return meterUsage.currentHeapCount;
  }

  /** Live slots after a collection (the firmware bench's resident figure). */
  async liveSlots(): Promise<number> {
    await this.idle();
    return (await this.worker.issueCommand(new Uint8Array(0))).meterUsage.currentHeapCount;
  }

  private account(m: MeterUsage): void {
    this.meter.slotPeak = Math.max(this.meter.slotPeak, m.currentHeapCount);
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
    const answer = await this.sim.op(c, payload);
    if (answer === null) throw new Error(`unknown host call ${c.op}`);
    return answer;
  }

  /** esp_ota_ops on this board's flash (ota-slots.ts); a power cut stops OTA writes as it stops the file system. */
  private otaOp(op: string, c: Record<string, any>, payload: Uint8Array): { value?: unknown } | void {
    this.o.flash?.power?.check();
    const ota = this.ota;
    if (!ota) throw new Error('no app is running');
    switch (op) {
      case 'ota.begin':
        this.otaUpdate?.abort();
        this.otaUpdate = null;
        // The SDK's ota module opens with OTA_SIZE_UNKNOWN: the whole passive slot is erased.
        this.otaUpdate = ota.begin(c.size ?? ota.passiveSlotBytes());
        return;
      case 'ota.write':
        if (!this.otaUpdate) throw new Error('no OTA in progress');
        this.otaUpdate.write(payload);
        return;
      case 'ota.finish': {
        const update = this.otaUpdate;
        this.otaUpdate = null;
        if (!update) throw new Error('no OTA in progress');
        update.finish();
        return;
      }
      case 'ota.abort':
        this.otaUpdate?.abort();
        this.otaUpdate = null;
        return;
      case 'ota.running':
        return { value: ota.runningApp() };
      case 'ota.lastInvalid':
        return { value: ota.lastInvalidApp() };
      case 'ota.markValid':
        return { value: ota.markValid() };
    }
  }
}

/** The bench's stand-in while a board restarts: 503 board_restarting with Retry-After, then FIN. */
function answerRestarting(socket: NetSocket): void {
  const body = JSON.stringify({ error: 'board_restarting', message: 'The board is restarting; try again shortly' });
  socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nretry-after: 1\r\nconnection: close\r\n\r\n${body}`);
}

/** Where each interface listens unless told otherwise: one loopback address per interface. */
const DEFAULT_HOSTS: Record<Iface, string> = { ethernet: '127.0.0.2', softap: '127.0.0.3', station: '127.0.0.4' };

/** An ESP32's SoftAP MAC is its station MAC + 1. */

export function bssidOf(wifiMac: string): string {
  const bytes = wifiMac.split(':').map((h) => parseInt(h, 16));
  bytes[5] = (bytes[5]! + 1) & 0xff;
  return bytes.map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
}
