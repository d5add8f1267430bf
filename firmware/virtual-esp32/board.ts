// A virtual board running the firmware the Moddable SDK built for the host (firmware/sdk-host): its
// flash (one image file: bootloader, partition table, otadata, two app slots; the storage partition's
// file system a folder beside it), its eFuses (efuse.ts: the firmware's HMAC is computed there with the
// key block the manifest names; the key never leaves this process), its
// radios in a VirtualAir, its I2C panel, its network of loopback addresses, and UART0. It starts as an
// ESP32-S3 does (docs/flash-and-boot.md): the ROM and ESP-IDF's bootloader pick and verify an app slot
// (boot-stage.ts), and the firmware that image carries runs (firmware-process.ts). A new board's flash
// is programmed as the factory would (factory.ts). Every reset (esp_restart, an abort such as memory
// full, the task watchdog) goes through the bootloader again, so an image still PENDING_VERIFY rolls
// back.
import type { KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { chipByName, type ChipName, type ChipSpec } from '../image/chips.ts';
import { parseEventLine, parseLogLine } from '../src/core/console/lines.ts';
import type { FirmwareSettings } from '../src/core/settings.ts';
import type { Iface } from '../src/hal/network.ts';
import type { DeviceIdentity } from '../src/hal/system.ts';
import type { ListenerLimits } from '../src/platform/moddable/hal/http-limits.ts';
import { hostFirmware } from '../sdk-host/build.ts';
import type { Position, VirtualAir } from './air.ts';
import { BootLog, type ResetReason } from './boot-log.ts';
import { BootFailure, runBootloader, type BootedApp } from './boot-stage.ts';
import { chipCalls } from './chip.ts';
import { Efuses, manifestHmacKeyBlock } from './efuse.ts';
import { hasAdminPassword, writeFactoryUuid } from './factory.ts';
import { flashFactoryImages } from './factory-flash.ts';
import { DEFAULT_CHIP, DEFAULT_FLASH_BYTES, firmwareImage, variantOf } from './firmware-image.ts';
import { productPartitions } from '../image/product-partitions.ts';
import { describeEnd, FirmwareProcess, runnableCopy, type FirmwareEnd, type HeapFigures } from './firmware-process.ts';
import { FlashImage } from './flash-image.ts';
import { flashTimingOf, type FlashTiming, type FlashTimingOption } from './flash-timing.ts';
import { BoardNetwork } from './network.ts';
import { Nvs } from './nvs.ts';
import { framebufferText } from './oled-text.ts';
import { Ssd1306 } from './oled-controller.ts';
import { OtaSlots } from './ota-slots.ts';
import { Radio } from './radio.ts';
import { RtcMemory } from './rtc-memory.ts';
import { TaskWatchdog } from './task-watchdog.ts';

export { BootFailure } from './boot-stage.ts';
export type { HeapFigures } from './firmware-process.ts';

export interface SdkBoardOptions {
  /** identity.firmwareVersion is only the version the factory flashes on a new board; after that the running image's descriptor says. */
  identity: DeviceIdentity;
  /**
   * The device key (64 hex digits), burned with purpose HMAC_UP in the key block the manifest names
   * (defines.fuse.hmac_key), the MAC from identity.wifiMac. Give either this or efuses.
   */
  fuseKeyHex?: string;
  /**
   * The chip's eFuse model, shared with its ROM loader (a bench board's: harness/virtual-board.ts).
   * Fuses are the chip's: an owner that powers the board up again (after a power cut, a stop) passes
   * the same model, so SECURE_VERSION and the secure boot fuses stay as burned.
   */
  efuses?: Efuses;
  /**
   * The build the board runs has CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK (docs/secure-boot.md), default
   * off: the bootloader never boots an app whose secure_version is below the eFuse SECURE_VERSION and
   * raises the counter when it boots a confirmed higher one (boot-stage.ts); esp_ota_set_boot_partition
   * refuses such an image and marking a new image valid raises the counter (ota-slots.ts).
   */
  antiRollback?: boolean;
  /** The factory signs the bootloader and the first app it writes on a blank flash with this private key (secure boot). */
  factorySigningKey?: KeyObject;
  /** The secure_version in the descriptor of the first app the factory writes (default 0). */
  factorySecureVersion?: number;
  /** The storage partition's file system (backup, records, event log, NVS): a folder. */
  flashDir: string;
  /** The flash image file (default: `<flashDir>.bin`, beside the folder); created and factory-programmed when missing. */
  flashImage?: string;
  /** Default 8 MB (ESP32-S3-DevKitC-1-N8); the rig may say otherwise. */
  flashSizeBytes?: number;
  /** Default esp32s3. */
  chip?: ChipName;
  /** Why the chip starts: the ROM banner's rst: line (default poweron). */
  reset?: ResetReason;
  /** Loopback addresses of the interfaces (DESIGN.md section 6). */
  hosts?: Partial<Record<Iface, string>>;
  /** The build's settings (config "settings"): boards with other settings run another build. */
  settings?: Partial<FirmwareSettings>;
  /** The build's listener limits (config "http"). */
  httpLimits?: Partial<ListenerLimits>;
  /** Typed on the console by the factory when the board has no admin password yet. */
  adminPassword?: string;
  clockSynchronized?: boolean;
  air?: VirtualAir;
  /** Where the board stands on the bench, in metres (range of its radios). */
  position?: Position;
  /** Without a panel on I2C the firmware runs headless. */
  panel?: boolean;
  /** Called for every console line (the ROM, the bootloader, the firmware's UART, the host's notes). */
  onConsoleLine?: (line: string) => void;
  /**
   * Called when the firmware restarts the chip (esp_restart): the owner resets it (a bench's chip with
   * its pins). Without it, the board restarts itself through the bootloader.
   */
  onReboot?: (reason: string) => void;
  /** Aborted: the board is powered off, a start under way included (it ends with BootFailure). */
  signal?: AbortSignal;
  /** The task watchdog: a main loop that does not answer for this long resets the chip (default 5 s, ESP-IDF's). */
  watchdogMs?: number;
  /** The listeners' ports by address, kept by an owner that starts the board again after a reset. */
  listenerPorts?: Map<string, number>;
  /**
   * Samples the heaps this often (a garbage collection first, so the figures are what is live), for
   * heapLive: the most a run needed. Unset: the watchdog pings once a second without collecting.
   */
  heapSampleMs?: number;
  /** Each of those samples (heapSampleMs), as it is taken: what a probe follows step by step. */
  onHeapSample?: (figures: HeapFigures) => void;
  /**
   * A power-cut trial's watch on the file system (tools/power-cuts/sdk.ts): called before each
   * operation of the firmware that changes it (the `file` module's create, write, delete, rename,
   * mkdir, rmdir: firmware/sdk-host/natives/fw_host_flash.c), the firmware waiting for the answer.
   * 'go' lets it happen; 'cut' cuts the power right there (cutPower: the operation never happens); for
   * a write, a number lets that many of its bytes reach the flash, then cuts. Without it the firmware
   * does not ask.
   */
  onFlashOp?: (op: FlashOp) => 'go' | 'cut' | number;
  /**
   * How long the flash takes to program and erase (flash-timing.ts): the GD25Q64C's typical times by
   * default, as on a board, so that the firmware's writes pace it as they would there; 'off' for a test
   * that needs speed and measures nothing the flash's time would change.
   */
  flashTiming?: FlashTimingOption;
}

/** A file system operation of the firmware, as onFlashOp sees it: its path in the flash folder (`/backup.json`); a write's length. */
export interface FlashOp {
  op: 'create' | 'write' | 'delete' | 'rename' | 'mkdir' | 'rmdir';
  /** Empty for a write (the file being written is the one created last that is still open). */
  path: string;
  length: number;
}

function efusesFromKey(o: SdkBoardOptions): Efuses {
  if (o.fuseKeyHex === undefined) throw new Error('a virtual board needs its eFuses or its fuse key (fuseKeyHex)');
  if (!/^[0-9a-fA-F]{64}$/.test(o.fuseKeyHex)) throw new Error('fuseKeyHex must be 32 bytes of hex');
  return new Efuses({ macAddress: o.identity.wifiMac, hmacKey: Buffer.from(o.fuseKeyHex, 'hex'), hmacKeyBlock: manifestHmacKeyBlock() });
}

/** More resets than this within RESET_WINDOW_MS: the board stays down (a boot loop). */
const MAX_RESETS = 5;
const RESET_WINDOW_MS = 60_000;
/** How long typeLine waits for a console command's OK/ERR line. */
const TYPE_LINE_TIMEOUT_MS = 30_000;
/** How long boot() waits for the firmware's boot to end (a target procedure waits for its source). */
const BOOT_TIMEOUT_MS = 120_000;
/** How long a started controller waits for its Ethernet listener. */
const ETHERNET_UP_MS = 5_000;
const DEFAULT_HOSTS: Record<Iface, string> = { ethernet: '127.0.0.2', softap: '127.0.0.3', station: '127.0.0.4' };

export type BootResult = Record<string, unknown>;

export class SdkBoard {
  readonly consoleLines: string[] = [];
  readonly displayHistory: string[][] = [];
  readonly events: { level: string; source: string; message: string }[] = [];
  readonly reboots: string[] = [];
  readonly urls: Partial<Record<Iface, string>> = {};
  clockSynchronized: boolean;
  clockOffsetMs = 0;
  position: Position;
  bootResult: unknown;
  /** The most the heaps held live (after a collection) in any sample since the firmware started (heapSampleMs). */
  heapLive = { chunkBytes: 0, slots: 0, stackSlots: 0, samples: 0 };
  private readonly chip: ChipSpec;
  private readonly flashTiming: FlashTiming | undefined;
  readonly efuses: Efuses;
  /** The key block the firmware's HMAC uses: the manifest's defines.fuse.hmac_key, as fw_fuse.c is built with. */
  private readonly hmacKeyBlock = manifestHmacKeyBlock();
  private readonly hosts: Record<Iface, string>;
  private readonly radio: Radio;
  private readonly network: BoardNetwork;
  private readonly panel: Ssd1306 | undefined;
  private spi: FlashImage | undefined;
  private app: BootedApp | undefined;
  private firmware: FirmwareProcess | undefined;
  private identityNow: DeviceIdentity;
  private closed = false;
  private closing: Promise<void> | undefined;
  private down = false;
  private restarting: Promise<void> | undefined;
  private readonly resets: number[] = [];
  private lastRestartReason: string | undefined;
  /** What the chip keeps across a reset that is not a power cut (reset reason, RTC no-init memory). */
  private readonly rtc = new RtcMemory();
  private uartPartial = '';
  private factorySetUp: Promise<void> | undefined;
  private booting: { resolve: (r: unknown) => void; reject: (e: Error) => void; client?: Record<string, unknown> } | undefined;
  private bootDone: Promise<unknown> | undefined;
  private watchdog: TaskWatchdog | undefined;
  /** The power was cut (cutPower): nothing restarts the firmware. */
  private unpowered = false;

  private constructor(private readonly o: SdkBoardOptions) {
    this.chip = chipByName(o.chip ?? DEFAULT_CHIP);
    this.flashTiming = flashTimingOf(o.flashTiming);
    this.identityNow = { ...o.identity };
    this.efuses = o.efuses ?? efusesFromKey(o);
    mkdirSync(o.flashDir, { recursive: true });
    this.position = o.position ?? { x: 0, y: 0 };
    this.clockSynchronized = o.clockSynchronized ?? true;
    this.hosts = { ...DEFAULT_HOSTS, ...o.hosts };
    const addresses = { ethernet: this.hosts.ethernet, ap: this.hosts.softap, station: this.hosts.station };
    this.radio = new Radio({
      ...(o.air ? { air: o.air } : {}),
      wifiMac: o.identity.wifiMac,
      ...(o.identity.ethernetMac ? { ethernetMac: o.identity.ethernetMac } : {}),
      stationAddress: addresses.station,
      position: () => this.position,
      softApUrl: () => this.urls.softap,
      reports: {
        wifi: (message, reason) => this.firmware?.emit('wifiNotify', message, reason ?? 0),
        scanResult: (ssid, bssid, rssi, channel, authentication) => this.firmware?.emit('wifiScanResult', ssid, bssid, rssi, channel, authentication),
        scanDone: () => this.firmware?.emit('wifiScanDone'),
        ethernet: (message) => this.firmware?.emit('ethernetNotify', message),
      },
    });
    this.network = new BoardNetwork({
      addresses,
      ...(o.listenerPorts ? { ports: o.listenerPorts } : {}),
      link: () => ({
        ethernet: this.radio.ethernetUp,
        ap: this.radio.ap !== null,
        station: this.radio.association ? { apAddress: this.radio.association.gateway.split(':')[0]!, infrastructure: this.radio.association.infrastructure } : null,
      }),
      isSoftApAddress: (address) => o.air?.isSoftApAddress(address) ?? false,
      ntpTime: () => (this.clockSynchronized ? Date.now() + this.clockOffsetMs : null),
      onListening: (iface, url) => {
        if (url === undefined) {
          delete this.urls[iface];
          return;
        }
        this.urls[iface] = url;
        // Port 80 is a loopback listener on another port here: said on the console before the
        // firmware's own "listening on <address>:80" line, for a console reader (harness/serial-board.ts).
        this.hostLine(`${iface}: listening on ${url.replace(/^http:\/\//, '')}`);
      },
    });
    this.panel = o.panel === false ? undefined : new Ssd1306((frame) => this.displayHistory.push(framebufferText(frame)));
  }

  /**
   * Powers the board on: factory flash on a new board, ROM, bootloader, the chosen image's firmware;
   * resolves once it has booted. Throws BootFailure when no slot holds a bootable image (the console
   * says why) or the image fails at every start.
   */
  static async start(o: SdkBoardOptions): Promise<SdkBoard> {
    const board = new SdkBoard(o);
    // Powered off while it starts (a bench stopping, a board that boots for ever): the start ends.
    const abort = () => void board.close();
    o.signal?.addEventListener('abort', abort, { once: true });
    try {
      if (o.signal?.aborted) throw new BootFailure('the board was powered off before it started');
      await board.network.start();
      await board.powerOn(o.reset ?? 'poweron');
      await board.boot();
    } catch (err) {
      await board.close();
      throw err;
    } finally {
      o.signal?.removeEventListener('abort', abort);
    }
    return board;
  }

  /** The build this board's identity and options call for (firmware-image.ts). */
  get variant() {
    return variantOf(this.o.identity, { ...(this.o.settings ? { settings: this.o.settings as Record<string, number> } : {}), ...(this.o.httpLimits ? { http: this.o.httpLimits as Record<string, number> } : {}) });
  }

  private async powerOn(reset: ResetReason): Promise<void> {
    this.spi = FlashImage.open(this.o.flashImage ?? `${this.o.flashDir}.bin`, this.o.flashSizeBytes ?? DEFAULT_FLASH_BYTES);
    if (this.spi.created) {
      const app = await firmwareImage(this.o.identity.firmwareVersion, { chip: this.chip, variant: this.variant, ...(this.o.factorySecureVersion ? { secureVersion: this.o.factorySecureVersion } : {}) });
      flashFactoryImages(this.spi, { chip: this.chip, table: productPartitions(), app, ...(this.o.factorySigningKey ? { signingKey: this.o.factorySigningKey } : {}) });
      writeFactoryUuid(new Nvs(this.spi, productPartitions()), this.o.identity.uuid);
    }
    await this.runFromFlash(reset);
  }

  /**
   * ROM and bootloader choose and verify a slot; its firmware starts. Firmware that ends before it has
   * booted resets the chip, and the bootloader runs again: a new image still PENDING_VERIFY is rolled
   * back then.
   */
  private async runFromFlash(reset: ResetReason): Promise<void> {
    for (;;) {
      const log = new BootLog((line) => this.consoleLine(line));
      const app = runBootloader(this.spi!, log, { chip: this.chip, reset, revision: this.efuses.revision, efuses: this.efuses, ...(this.o.antiRollback ? { antiRollback: true } : {}) });
      this.app = app;
      this.identityNow = { ...this.o.identity, firmwareVersion: app.descriptor.version };
      this.appStartLines(app, log);
      const ended = await this.startFirmware(app);
      if (!ended) return;
      if (this.closed) throw new BootFailure('the board was powered off while it booted');
      if (this.unpowered) throw new BootFailure('the power was cut while the board booted');
      const cause = describeEnd(ended);
      this.noteEnd(ended, cause);
      this.reboots.push(`panic: ${cause}`);
      this.hostLine(`firmware fault (the app failed to start: ${cause}): reset`);
      if (this.tooManyResets()) throw new BootFailure(`the app in ${app.partition.name} fails at every start`);
      reset = 'panic';
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

  /**
   * Starts the image's firmware; resolves with how it ended when it ended before its boot did (it
   * could not even load, or it died while booting), else with nothing once it has booted.
   */
  private async startFirmware(app: BootedApp): Promise<FirmwareEnd | undefined> {
    const { loader } = await hostFirmware(this.variant); // the loader only: the firmware is the image's
    if (this.closed) throw new BootFailure('the board was powered off while it booted');
    const path = runnableCopy(app.firmware, loader);
    const ota = new OtaSlots(this.spi!, app.table, this.chip, app.partition, { efuses: this.efuses, antiRollback: this.o.antiRollback ?? false });
    this.radio.powerOff();
    this.uartPartial = '';
    let bootEnded!: (end: FirmwareEnd | undefined) => void;
    const outcome = new Promise<FirmwareEnd | undefined>((r) => (bootEnded = r));
    this.bootDone = new Promise((resolve, reject) => {
      this.booting = { resolve, reject };
    });
    this.bootDone.then(
      () => bootEnded(undefined),
      // A boot given up on while the firmware still runs (the task watchdog's reset, the firmware's
      // own "did not start") is not waited for here: boot() sees the rejection, and a reset under way.
      () => bootEnded(undefined),
    );
    const firmware = new FirmwareProcess({
      loader,
      firmware: path,
      flashDir: this.o.flashDir,
      handlers: chipCalls({
        fuseHmac: (message) => this.efuses.hmac(this.hmacKeyBlock, message),
        radio: this.radio,
        network: this.network,
        addresses: { ethernet: this.hosts.ethernet, ap: this.hosts.softap, station: this.hosts.station },
        ota,
        nvs: new Nvs(this.spi!, app.table),
        panel: this.panel,
        log: new BootLog((line) => this.consoleLine(line)),
        checkPower: () => undefined,
        ...(this.o.onFlashOp ? { flashOp: (op: string, path: string, length: number) => this.flashOp(op, path, length) } : {}),
        restart: (reason) => void (this.lastRestartReason = reason),
        rtc: this.rtc,
      }),
      onUart: (bytes) => this.uartOutput(bytes),
      // The instrumented build (mcconfig -i, for the stack's peak) samples its counters once a second
      // on the trace; the heap probe reads the same counters, so the samples are left out.
      onTrace: (line) => void (line.startsWith('instruments') || this.consoleLines.push(`XS ${line}`)),
      watchFlash: this.o.onFlashOp !== undefined,
      flashTiming: this.flashTiming,
      onEnd: (end) => {
        if (this.firmware !== firmware) return;
        if (this.closed) return bootEnded(end); // powered off: a start under way ends too
        if (this.booting) {
          this.booting.reject(new Error(`the firmware ended while booting: ${describeEnd(end)}`));
          this.booting = undefined;
          bootEnded(end);
          return;
        }
        void this.ended(end);
      },
    });
    this.firmware = firmware;
    this.startWatchdog();
    return outcome;
  }

  /** The firmware ended after its boot: restart through the bootloader as the chip would. */
  private ended(end: FirmwareEnd): Promise<void> {
    if (this.closed || end.kind === 'off') return Promise.resolve();
    if (end.kind === 'restart') {
      const reason = this.lastRestartReason ?? 'esp_restart';
      this.lastRestartReason = undefined;
      this.rtc.ended('software', { by: reason });
      this.reboots.push(reason);
      if (this.o.onReboot) {
        this.network.firmwareGone(true).catch(() => undefined);
        setImmediate(() => this.o.onReboot?.(reason));
        return Promise.resolve();
      }
      return this.reset('software', undefined);
    }
    const cause = describeEnd(end);
    this.noteEnd(end, cause);
    this.reboots.push(end.kind === 'abort' ? `abort: ${end.why}` : `panic: ${cause}`);
    this.hostLine(`firmware fault (${cause}): reset`);
    return this.reset('panic', cause);
  }

  /** What the next boot reads of how this run ended: an XS abort with what its hook noted, else a panic. */
  private noteEnd(end: FirmwareEnd, cause: string): void {
    if (end.kind === 'abort') this.rtc.ended('abort', { why: end.why });
    else this.rtc.ended('panic', { why: cause });
  }

  /** A reset: the radios go quiet and the RAM is lost; the flash, the listeners' ports and the console stay. Requests meanwhile get 503. */
  private reset(reason: ResetReason, fault: string | undefined): Promise<void> {
    if (this.closed || this.restarting) return this.restarting ?? Promise.resolve();
    this.restarting = (async () => {
      this.stopWatchdog();
      await this.firmware?.kill();
      this.radio.powerOff();
      await this.network.firmwareGone(true);
      if (fault !== undefined && this.tooManyResets()) return;
      await this.runFromFlash(reason);
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

  /** Counts a reset; true when the board now stays down (more than MAX_RESETS within a minute). */
  private tooManyResets(): boolean {
    const now = Date.now();
    while (this.resets.length > 0 && now - this.resets[0]! > RESET_WINDOW_MS) this.resets.shift();
    this.resets.push(now);
    if (this.resets.length <= MAX_RESETS) return false;
    this.down = true;
    this.hostLine(`${this.resets.length} resets within ${RESET_WINDOW_MS / 1000} s: the board stays down`);
    return true;
  }

  /** The task watchdog (task-watchdog.ts) of the firmware now running; its samples feed heapLive. */
  private startWatchdog(): void {
    this.stopWatchdog();
    const firmware = this.firmware;
    if (!firmware) return;
    const timeoutMs = this.o.watchdogMs ?? 5000;
    this.heapLive = { chunkBytes: 0, slots: 0, stackSlots: 0, samples: 0 };
    this.watchdog = new TaskWatchdog(firmware, {
      intervalMs: this.o.heapSampleMs ?? 1000,
      timeoutMs,
      collect: this.o.heapSampleMs !== undefined,
      onSample: (figures) => {
        this.heapLive.chunkBytes = Math.max(this.heapLive.chunkBytes, figures.chunkBytes);
        this.heapLive.slots = Math.max(this.heapLive.slots, figures.slots);
        this.heapLive.stackSlots = Math.max(this.heapLive.stackSlots, figures.stackPeak);
        this.heapLive.samples++;
        this.o.onHeapSample?.(figures);
      },
      onStuck: () => {
        if (this.firmware !== firmware || this.closed) return;
        this.reboots.push('watchdog: the main loop did not answer');
        this.rtc.ended('watchdog');
        this.hostLine(`firmware fault (task watchdog: no answer for ${timeoutMs / 1000} s): reset`);
        if (this.booting) {
          this.booting.reject(new Error('the task watchdog reset the board while it booted'));
          this.booting = undefined;
        }
        void this.reset('watchdog', 'task watchdog');
      },
    });
  }

  private stopWatchdog(): void {
    this.watchdog?.stop();
    this.watchdog = undefined;
  }

  /** onFlashOp's answer to the firmware's hook: -1 goes on, a count lets part of a write through; a cut never answers. */
  private flashOp(op: string, path: string, length: number): number | Promise<number> {
    if (op === 'cut') {
      void this.cutPower();
      return new Promise<number>(() => undefined);
    }
    const answer = this.o.onFlashOp!({ op: op as FlashOp['op'], path: path.replace(/^\/proc\/self\/cwd(?=\/)/, ''), length });
    if (answer === 'go') return -1;
    if (answer === 'cut' || op !== 'write') {
      void this.cutPower();
      return new Promise<number>(() => undefined);
    }
    return Math.max(0, Math.min(length, Math.floor(answer)));
  }

  /**
   * A power cut: the firmware ends at once wherever it is (SIGKILL), the radios and the board's
   * connections with it; the flash keeps what reached it, as after a chip loses its supply. The board
   * stays off (a boot under way fails with BootFailure): close it, and start a board on the same flash
   * to power it up again.
   */
  async cutPower(): Promise<void> {
    if (this.unpowered || this.closed) return;
    this.unpowered = true;
    this.down = true;
    this.stopWatchdog();
    this.hostLine('power cut');
    await this.firmware?.kill();
    this.radio.powerOff();
    await this.network.firmwareGone(false);
  }

  /** Resolves once a reset under way (if any) has finished. */
  async settled(): Promise<void> {
    await this.restarting;
  }

  /**
   * Resolves with the firmware's boot result (its console's EVT line: the target procedure's outcome
   * on a controller, the provisioning attempt's and normal mode's on a client) once it has booted; on
   * a controller, also once its Ethernet listener is up.
   */
  async boot(): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    try {
      this.bootResult = await Promise.race([
        this.bootDone ?? Promise.reject(new Error('the board is off')),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no boot within ${BOOT_TIMEOUT_MS / 1000} s`)), BOOT_TIMEOUT_MS))),
      ]);
    } catch (err) {
      if (!this.restarting) throw err;
      await this.restarting;
      if (this.down) throw new BootFailure(`board ${this.o.identity.uuid} is down: ${err instanceof Error ? err.message : String(err)}`);
      return this.bootResult;
    } finally {
      clearTimeout(timer);
    }
    // The factory's answer is on the console before the board counts as booted: a command the bench
    // types next must not take the factory's OK for its own.
    await this.factorySetUp;
    if (this.variant.ethernet) {
      const until = Date.now() + ETHERNET_UP_MS;
      while (!this.urls.ethernet && Date.now() < until && !this.closed) await new Promise((r) => setTimeout(r, 5));
    }
    return this.bootResult;
  }

  /** Whether the firmware listens on the interface now (the SoftAP's listener exists only while the SoftAP is up). */
  listening(iface: Iface): boolean {
    return this.urls[iface] !== undefined;
  }

  /** The SoftAP on the air now (its SSID, passphrase and TX power), or null. */
  get softAp(): { ssid: string; password: string; txPowerDbm: number } | null {
    const ap = this.radio.ap;
    return ap?.inAir ? { ssid: ap.ssid, password: ap.password, txPowerDbm: this.radio.txPowerDbm } : null;
  }

  /** The image running now: its slot and esp_app_desc_t. */
  get runningImage(): BootedApp | undefined {
    return this.app;
  }

  /** The board's identity; firmwareVersion is the running image's. */
  get identity(): DeviceIdentity {
    return this.identityNow;
  }

  get display(): string[] {
    return this.displayHistory[this.displayHistory.length - 1] ?? [];
  }

  /** The chip calls the firmware made last, for diagnosing a board that seems stuck. */
  get trace(): readonly string[] {
    return this.firmware?.calls ?? [];
  }

  /** The running firmware's process id (the loader with its mc.so), for a test's fault injection; undefined while none runs. */
  get firmwarePid(): number | undefined {
    return this.firmware?.running ? this.firmware.pid : undefined;
  }

  /** The firmware process's CPU time so far, in milliseconds (utime + stime). */
  cpuMs(): number {
    const pid = this.firmware?.pid;
    if (!pid) return 0;
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms
    } catch {
      return 0;
    }
  }

  /** The machine's heaps now (XS's own counters): optionally after a garbage collection, optionally restarting the peaks. */
  async heap(o: { collect?: boolean; resetPeaks?: boolean } = {}): Promise<HeapFigures> {
    const figures = await this.firmware?.ping({ ...o, timeoutMs: 10_000 });
    if (!figures) throw new Error(`board ${this.o.identity.uuid}: the firmware did not answer the heap probe`);
    return figures;
  }

  /** Bytes on UART0's RX pin (the console). */
  uartReceive(bytes: Uint8Array): void {
    this.firmware?.uartReceive(bytes);
  }

  /** Types a line on the serial console; resolves with the firmware's OK/ERR answer line. */
  async typeLine(line: string): Promise<string> {
    const before = this.consoleLines.length;
    this.uartReceive(new TextEncoder().encode(`${line}\n`));
    const find = () => this.consoleLines.slice(before).find((l) => l.startsWith('OK ') || l.startsWith('ERR ') || l === 'OK');
    const until = Date.now() + TYPE_LINE_TIMEOUT_MS;
    while (!find() && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    const answer = find();
    if (!answer) throw new Error(`no answer to ${JSON.stringify(line.replace(/^password .*/, 'password …'))}`);
    return answer;
  }

  /** The firmware's UART output: lines for the console, the event log, the boot's end. */
  private uartOutput(bytes: Uint8Array): void {
    const text = this.uartPartial + Buffer.from(bytes).toString('utf8');
    const lines = text.split('\n');
    this.uartPartial = lines.pop() ?? '';
    for (const raw of lines) this.firmwareLine(raw.replace(/\r$/, ''));
  }

  private firmwareLine(line: string): void {
    const logged = parseLogLine(line);
    if (logged) this.events.push({ ...logged, level: logged.level.toLowerCase() });
    this.consoleLine(line);
    if (line.startsWith('LOG INFO boot: ') && this.o.adminPassword && !hasAdminPassword(this.o.flashDir)) {
      // The factory's set-up: the admin password, typed on the console once the firmware takes commands.
      this.factorySetUp = this.typeLine(`password ${this.o.adminPassword}`).then(
        () => undefined,
        () => undefined,
      );
    }
    const failed = /^LOG ERROR board: the firmware did not start: (.*)$/.exec(line);
    if (failed && this.booting) {
      this.booting.reject(new Error(`firmware: ${failed[1]}`));
      this.booting = undefined;
      return;
    }
    const event = this.booting ? parseEventLine(line) : undefined;
    if (event) this.bootEvent(event);
  }

  /** The EVT lines that end a boot (core/device.ts boot()). */
  private bootEvent(event: Record<string, unknown>): void {
    const booting = this.booting!;
    const { event: name, ...rest } = event;
    if (name === 'target_provisioning') {
      this.booting = undefined;
      booting.resolve({ role: 'controller', provisioning: rest });
    } else if (name === 'client_provisioning' && !booting.client) {
      const provisioning = rest.result;
      if (provisioning === 'configured') booting.client = { role: 'client', provisioning };
      else {
        this.booting = undefined;
        booting.resolve({ role: 'client', provisioning });
      }
    } else if (name === 'client_normal_mode' && booting.client) {
      this.booting = undefined;
      booting.resolve({ ...booting.client, normal: rest.result });
    }
  }

  /** A line the host writes on the board's console (diagnostics a bench tester may read). */
  private hostLine(text: string): void {
    this.consoleLine(`HOST ${text}`);
  }

  /** A line on the board's UART: the ROM, the bootloader, the firmware, the host's diagnostics. */
  private consoleLine(line: string): void {
    this.consoleLines.push(line);
    this.o.onConsoleLine?.(line);
  }

  /**
   * Powers the board off; every caller waits for the same power-off (an abort during a start closes it
   * and the start's own clean-up closes it again: both return once the firmware's process is gone).
   */
  close(): Promise<void> {
    this.closed = true;
    return (this.closing ??= this.powerOff());
  }

  private async powerOff(): Promise<void> {
    this.stopWatchdog();
    this.booting?.reject(new Error('the board was powered off'));
    this.booting = undefined;
    await this.restarting;
    // Power off: the radios, timers and connections end with the firmware.
    await this.firmware?.stop();
    this.radio.powerOff();
    await this.network.firmwareGone(false);
    await this.network.close();
    this.spi?.close();
  }
}
