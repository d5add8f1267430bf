// The machine of a virtual board (as QEMU's hw/xtensa/esp32s3.c is a chip's): handed the firmware the
// Moddable SDK built for the host (sdk-host/firmware-image.ts), it wires its flash (one image file:
// bootloader, partition table, otadata, two app slots; the storage partition's file system a folder
// beside it), its eFuses (efuse.ts: the firmware's HMAC is computed there with the key block the
// manifest names; the key never leaves this process), its radios in a VirtualAir, its I2C panel, its
// network of loopback addresses and UART0 (board-wiring.ts), and powers, resets and boots them. It
// starts as an ESP32-S3 does (docs/flash-and-boot.md): the ROM and ESP-IDF's bootloader pick and
// verify an app slot (boot-stage.ts), and the firmware that image carries runs (firmware-process.ts).
// A new board's flash is programmed as the factory would (factory-flash.ts). Every reset (esp_restart,
// an abort such as memory full, the task watchdog) goes through the bootloader again, so an image
// still PENDING_VERIFY rolls back. It never reads what its firmware prints: the bench's console reader
// does, and says when a boot has ended (sdk-board.ts, probes/).
import { mkdirSync } from 'node:fs';
import { chipByName, type ChipSpec } from '../image/chips.ts';
import type { Iface } from '../src/hal/network.ts';
import type { DeviceIdentity } from '../src/hal/system.ts';
import type { Position } from './air.ts';
import type { BootConsole, SdkBoardOptions } from './board-options.ts';
import { BootLog, type ResetReason } from './boot-log.ts';
import { ResetCounter } from './boot-loop.ts';
import { appInitLines, BootFailure, runBootloader, type BootedApp } from './boot-stage.ts';
import { wireBoard, type Wiring } from './board-wiring.ts';
import { chipCalls } from './chip.ts';
import { efusesFromFuseKey, manifestHmacKeyBlock, type Efuses } from './efuse.ts';
import { writeFactoryUuid } from './factory.ts';
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
import { flashOpAnswer } from './probes/power-cut.ts';



export type BootResult = Record<string, unknown>;

export abstract class BoardMachine {
  readonly displayHistory: string[][] = [];
  readonly reboots: string[] = [];
  readonly urls: Partial<Record<Iface, string>> = {};
  clockSynchronized: boolean;
  clockOffsetMs = 0;
  position: Position;
  bootResult: unknown;
  private readonly chip: ChipSpec;
  private readonly flashTiming: FlashTiming | undefined;
  readonly efuses: Efuses;
  /** The key block the firmware's HMAC uses: the manifest's defines.fuse.hmac_key, as fw_fuse.c is built with. */
  private readonly hmacKeyBlock = manifestHmacKeyBlock();
  private readonly addresses: Wiring['addresses'];
  protected readonly radio: Radio;
  protected readonly network: BoardNetwork;
  private readonly panel: Ssd1306 | undefined;
  private spi: FlashImage | undefined;
  protected app: BootedApp | undefined;
  protected firmware: FirmwareProcess | undefined;
  protected identityNow: DeviceIdentity;
  protected closed = false;
  private closing: Promise<void> | undefined;
  protected down = false;
  protected restarting: Promise<void> | undefined;
  private readonly resets = new ResetCounter();
  private lastRestartReason: string | undefined;
  /** What the chip keeps across a reset that is not a power cut (reset reason, RTC no-init memory). */
  private readonly rtc = new RtcMemory();
  protected bootDone: Promise<unknown> | undefined;
  private watchdog: TaskWatchdog | undefined;
  /** The power was cut (cutPower): nothing restarts the firmware. */
  private unpowered = false;

  protected constructor(
    protected readonly o: SdkBoardOptions,
    /** The bench's reading of the console (probes/console-reader.ts): the board only hands it bytes and lines. */
    protected readonly console: BootConsole,
  ) {
    this.chip = chipByName(o.chip ?? DEFAULT_CHIP);
    this.flashTiming = flashTimingOf(o.flashTiming);
    this.identityNow = { ...o.identity };
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

  protected async powerOn(reset: ResetReason): Promise<void> {
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

  /** The task watchdog (task-watchdog.ts) of the firmware now running; its samples go to the bench (watching). */
  private startWatchdog(): void {
    this.stopWatchdog();
    const firmware = this.firmware;
    if (!firmware) return;
    const timeoutMs = this.o.watchdogMs ?? 5000;
    const onSample = this.watching();
    this.watchdog = new TaskWatchdog(firmware, {
      intervalMs: this.o.heapSampleMs ?? 1000,
      timeoutMs,
      collect: this.o.heapSampleMs !== undefined,
      onSample,
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

  /** Resolves once the firmware's boot has ended (the bench's console reader says when: sdk-board.ts). */
  protected abstract boot(): Promise<unknown>;

  /** A firmware starts: where the watchdog's heap samples go. */
  protected abstract watching(): (figures: HeapFigures) => void;

  /** Bytes on UART0's RX pin (the console). */
  uartReceive(bytes: Uint8Array): void {
    this.firmware?.uartReceive(bytes);
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
