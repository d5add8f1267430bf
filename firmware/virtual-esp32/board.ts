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
import { mkdirSync } from 'node:fs';
import { chipByName, type ChipSpec } from '../image/chips.ts';
import type { Iface } from '../src/hal/network.ts';
import type { DeviceIdentity } from '../src/hal/system.ts';
import type { Position } from './air.ts';
import type { SdkBoardOptions } from './board-options.ts';
import { BootLog, type ResetReason } from './boot-log.ts';
import { ResetCounter } from './boot-loop.ts';
import { appInitLines, BootFailure, runBootloader, type BootedApp } from './boot-stage.ts';
import { wireBoard, type Wiring } from './board-wiring.ts';
import { chipCalls } from './chip.ts';
import { efusesFromFuseKey, manifestHmacKeyBlock, type Efuses } from './efuse.ts';
import { hasAdminPassword, writeFactoryUuid } from './factory.ts';
import { flashFactoryImages } from './factory-flash.ts';
import { DEFAULT_CHIP, DEFAULT_FLASH_BYTES } from '../sdk-host/firmware-image.ts';
import { productPartitions } from '../image/product-partitions.ts';
import { describeEnd, FirmwareProcess, runnableCopy, type FirmwareEnd, type HeapFigures } from './firmware-process.ts';
import { FlashImage } from './flash-image.ts';
import { flashTimingOf, type FlashTiming, type FlashTimingOption } from './flash-timing.ts';
import type { BoardNetwork } from './network.ts';
import { Nvs } from './nvs.ts';
import { framebufferText } from './oled-text.ts';
import { Ssd1306 } from './oled-controller.ts';
import { OtaSlots } from './ota-slots.ts';
import type { Radio } from './radio.ts';
import { RtcMemory } from './rtc-memory.ts';
import { TaskWatchdog } from './task-watchdog.ts';
import { ConsoleReader } from './probes/console-reader.ts';
import { emptyHeapLive, processCpuMs, takeHeapSample } from './probes/heap.ts';
import { flashOpAnswer } from './probes/power-cut.ts';

export { BootFailure } from './boot-stage.ts';
export type { HeapFigures } from './firmware-process.ts';
export type { FlashOp, SdkBoardOptions } from './board-options.ts';
export type { BoardFirmware } from '../sdk-host/firmware-image.ts';

/** How long boot() waits for the firmware's boot to end (a target procedure waits for its source). */
const BOOT_TIMEOUT_MS = 120_000;
/** How long a started controller waits for its Ethernet listener. */
const ETHERNET_UP_MS = 5_000;

export type BootResult = Record<string, unknown>;

export class SdkBoard {
  readonly displayHistory: string[][] = [];
  readonly reboots: string[] = [];
  readonly urls: Partial<Record<Iface, string>> = {};
  clockSynchronized: boolean;
  clockOffsetMs = 0;
  position: Position;
  bootResult: unknown;
  /** The most the heaps held live (after a collection) in any sample since the firmware started (heapSampleMs). */
  heapLive = emptyHeapLive();
  private readonly chip: ChipSpec;
  private readonly flashTiming: FlashTiming | undefined;
  readonly efuses: Efuses;
  /** The key block the firmware's HMAC uses: the manifest's defines.fuse.hmac_key, as fw_fuse.c is built with. */
  private readonly hmacKeyBlock = manifestHmacKeyBlock();
  private readonly addresses: Wiring['addresses'];
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
  private readonly resets = new ResetCounter();
  private lastRestartReason: string | undefined;
  /** What the chip keeps across a reset that is not a power cut (reset reason, RTC no-init memory). */
  private readonly rtc = new RtcMemory();
  /** The bench's reading of the console (probes/console-reader.ts): lines, events, the boot's end. */
  private readonly console: ConsoleReader;
  private bootDone: Promise<unknown> | undefined;
  private watchdog: TaskWatchdog | undefined;
  /** The power was cut (cutPower): nothing restarts the firmware. */
  private unpowered = false;

  private constructor(private readonly o: SdkBoardOptions) {
    this.chip = chipByName(o.chip ?? DEFAULT_CHIP);
    this.flashTiming = flashTimingOf(o.flashTiming);
    this.identityNow = { ...o.identity };
    this.console = new ConsoleReader({
      send: (bytes) => this.uartReceive(bytes),
      ...(o.onConsoleLine ? { onLine: o.onConsoleLine } : {}),
      ...(o.adminPassword ? { adminPassword: o.adminPassword } : {}),
      hasAdminPassword: () => hasAdminPassword(o.flashDir),
    });
    this.efuses = o.efuses ?? efusesFromFuseKey(o.identity.wifiMac, o.fuseKeyHex);
    mkdirSync(o.flashDir, { recursive: true });
    this.position = o.position ?? { x: 0, y: 0 };
    this.clockSynchronized = o.clockSynchronized ?? true;
    ({ addresses: this.addresses, radio: this.radio, network: this.network } = wireBoard(o, {
      position: () => this.position,
      firmware: () => this.firmware,
      urls: this.urls,
      ntpTime: () => (this.clockSynchronized ? Date.now() + this.clockOffsetMs : null),
      hostLine: (text) => this.hostLine(text),
    }));
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

  /** The build this board runs (handed to it: SdkBoardOptions.firmware). */
  get variant() {
    return this.o.firmware.variant;
  }

  private async powerOn(reset: ResetReason): Promise<void> {
    this.spi = FlashImage.open(this.o.flashImage ?? `${this.o.flashDir}.bin`, this.o.flashSizeBytes ?? DEFAULT_FLASH_BYTES);
    if (this.spi.created) {
      const app = await this.o.firmware.factoryApp();
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
      appInitLines(app, log);
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

  /**
   * Starts the image's firmware; resolves with how it ended when it ended before its boot did (it
   * could not even load, or it died while booting), else with nothing once it has booted.
   */
  private async startFirmware(app: BootedApp): Promise<FirmwareEnd | undefined> {
    const { loader } = this.o.firmware; // the loader only: the firmware is the image's
    const path = runnableCopy(app.firmware, loader);
    const ota = new OtaSlots(this.spi!, app.table, this.chip, app.partition, { efuses: this.efuses, antiRollback: this.o.antiRollback ?? false });
    this.radio.powerOff();
    let bootEnded!: (end: FirmwareEnd | undefined) => void;
    const outcome = new Promise<FirmwareEnd | undefined>((r) => (bootEnded = r));
    this.bootDone = new Promise((resolve, reject) => this.console.watchBoot({ resolve, reject }));
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
        addresses: this.addresses,
        ota,
        nvs: new Nvs(this.spi!, app.table),
        panel: this.panel,
        log: new BootLog((line) => this.consoleLine(line)),
        checkPower: () => undefined,
        ...(this.o.onFlashOp ? { flashOp: (op: string, path: string, length: number) => this.flashOp(op, path, length) } : {}),
        restart: (reason) => void (this.lastRestartReason = reason),
        rtc: this.rtc,
      }),
      onUart: (bytes) => this.console.firmwareBytes(bytes),
      // The instrumented build (mcconfig -i, for the stack's peak) samples its counters once a second
      // on the trace; the heap probe reads the same counters, so the samples are left out.
      onTrace: (line) => void (line.startsWith('instruments') || this.console.lines.push(`XS ${line}`)),
      watchFlash: this.o.onFlashOp !== undefined,
      flashTiming: this.flashTiming,
      onEnd: (end) => {
        if (this.firmware !== firmware) return;
        if (this.closed) return bootEnded(end); // powered off: a start under way ends too
        if (this.console.failBoot(new Error(`the firmware ended while booting: ${describeEnd(end)}`))) return bootEnded(end);
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

  /** Counts a reset; true when the board now stays down (a boot loop: boot-loop.ts). */
  private tooManyResets(): boolean {
    const down = this.resets.count();
    if (down === undefined) return false;
    this.down = true;
    this.hostLine(down);
    return true;
  }

  /** The task watchdog (task-watchdog.ts) of the firmware now running; its samples feed heapLive. */
  private startWatchdog(): void {
    this.stopWatchdog();
    const firmware = this.firmware;
    if (!firmware) return;
    const timeoutMs = this.o.watchdogMs ?? 5000;
    this.heapLive = emptyHeapLive();
    this.watchdog = new TaskWatchdog(firmware, {
      intervalMs: this.o.heapSampleMs ?? 1000,
      timeoutMs,
      collect: this.o.heapSampleMs !== undefined,
      onSample: (figures) => {
        takeHeapSample(this.heapLive, figures);
        this.o.onHeapSample?.(figures);
      },
      onStuck: () => {
        if (this.firmware !== firmware || this.closed) return;
        this.reboots.push('watchdog: the main loop did not answer');
        this.rtc.ended('watchdog');
        this.hostLine(`firmware fault (task watchdog: no answer for ${timeoutMs / 1000} s): reset`);
        this.console.failBoot(new Error('the task watchdog reset the board while it booted'));
        void this.reset('watchdog', 'task watchdog');
      },
    });
  }

  private stopWatchdog(): void {
    this.watchdog?.stop();
    this.watchdog = undefined;
  }

  /** onFlashOp's answer to the firmware's hook (probes/power-cut.ts); a cut never answers. */
  private flashOp(op: string, path: string, length: number): number | Promise<number> {
    const answer = flashOpAnswer(op, path, length, this.o.onFlashOp!);
    if (answer !== 'cut') return answer;
    void this.cutPower();
    return new Promise<number>(() => undefined);
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
    await this.console.factorySetUp;
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
    return processCpuMs(this.firmware?.pid);
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
  typeLine(line: string): Promise<string> {
    return this.console.typeLine(line);
  }

  /** Every console line so far (the ROM, the bootloader, the firmware's UART, the host's notes). */
  get consoleLines(): string[] {
    return this.console.lines;
  }

  /** The firmware's LOG lines so far, as events. */
  get events(): { level: string; source: string; message: string }[] {
    return this.console.events;
  }

  /** A line the host writes on the board's console (diagnostics a bench tester may read). */
  private hostLine(text: string): void {
    this.consoleLine(`HOST ${text}`);
  }

  /** A line on the board's UART: the ROM, the bootloader, the firmware, the host's diagnostics. */
  private consoleLine(line: string): void {
    this.console.line(line);
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
    this.console.failBoot(new Error('the board was powered off'));
    await this.restarting;
    // Power off: the radios, timers and connections end with the firmware.
    await this.firmware?.stop();
    this.radio.powerOff();
    await this.network.firmwareGone(false);
    await this.network.close();
    this.spi?.close();
  }
}
