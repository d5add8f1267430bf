// A virtual ESP32 seen from its pins: power, EN and IO0 (through the auto-reset circuit or the BOOT
// button, strapping.ts), and UART0. When it leaves reset it latches IO0: high, the ROM boots from
// flash and the app runs (the owner's startApp: ROM, bootloader and firmware, board.ts); low, the
// ROM waits for download and UART0 speaks the bootloader protocol (rom/loader.ts) at the line's
// baud rate (uart.ts). One mode at a time; transitions happen in order.
import type { ChipSpec } from '../image/chips.ts';
import { BootLog, type ResetReason } from './boot-log.ts';
import type { Efuses } from './efuse.ts';
import { FlashImage } from './flash-image.ts';
import { RomLoader } from './rom/loader.ts';
import { Esp32s3Registers } from './rom/registers.ts';
import { SlipDecoder, slipEncode } from './rom/slip.ts';
import { BootFailure } from './rom-boot.ts';
import { StrappingPins, type BootMode } from './strapping.ts';
import { PacedLine } from '../chip/uart.ts';

/** The ROM's rate after reset (esptool docs: the ESP32-S3 ROM always starts at 115200 bps). */
export const ROM_BAUD = 115200;

export interface AppHandle {
  /** Bytes on UART0's RX pin while the app runs (the firmware's console). */
  receive(bytes: Uint8Array): void;
  stop(): Promise<void>;
}

export interface VirtualEsp32Options {
  chip: ChipSpec;
  flashImage: string;
  flashSizeBytes: number;
  /** The chip's eFuses (MAC, key blocks, revision, security fields): the ROM loader reads them. */
  efuses: Efuses;
  /** Boots from flash and runs the firmware; rejects with BootFailure when nothing is bootable. */
  startApp(reset: ResetReason): Promise<AppHandle>;
  /** Bytes on UART0's TX line at the rate they were sent at, to every listener (pseudo-terminal, RFC 2217 client). */
  transmit(bytes: Uint8Array, baud: number): void;
}

export type ChipMode = 'off' | 'starting' | 'app' | 'download' | 'halted';

export class VirtualEsp32 {
  mode: ChipMode = 'off';
  /** Why the chip is halted (nothing bootable), as its console said. */
  halted: string | undefined;
  readonly pins: StrappingPins;
  private app: AppHandle | null = null;
  private loader: RomLoader | null = null;
  private loaderFlash: FlashImage | null = null;
  private readonly tx: PacedLine;
  private readonly rx: PacedLine;
  private readonly slip: SlipDecoder;
  /** Console input that arrived while the app was starting: the UART's RX buffer. */
  private readonly pending: Uint8Array[] = [];
  private transition: Promise<void> = Promise.resolve();
  private failure: Error | null = null;
  private powered = false;

  constructor(private readonly o: VirtualEsp32Options) {
    this.tx = new PacedLine((bytes, baud) => this.o.transmit(bytes, baud), ROM_BAUD);
    this.slip = new SlipDecoder((packet) => this.loader?.receive(packet));
    this.rx = new PacedLine((bytes) => this.slip.push(bytes), ROM_BAUD);
    this.pins = new StrappingPins(
      () => this.enqueue(() => this.stop()),
      (mode) => this.enqueue(() => this.run(mode, 'poweron')),
    );
  }

  /** The UART's current rate (CHANGE_BAUDRATE sets it in download mode). */
  get baud(): number {
    return this.rx.baud;
  }

  private enqueue(step: () => Promise<void>): Promise<void> {
    this.transition = this.transition.then(step).catch((err: Error) => {
      this.failure = err;
      this.line(`HOST the chip did not start: ${err.message}`);
    });
    return this.transition;
  }

  /** Resolves once every reset and start asked for so far has happened; throws what made one fail. */
  async settled(): Promise<void> {
    let seen: Promise<void>;
    do {
      await this.pins.latching;
      seen = this.transition;
      await seen;
    } while (seen !== this.transition);
    const failure = this.failure;
    this.failure = null;
    if (failure) throw failure;
  }

  powerOn(): Promise<void> {
    this.powered = true;
    this.enqueue(() => this.run(this.pins.bootMode(), 'poweron'));
    return this.settled();
  }

  async powerOff(): Promise<void> {
    this.powered = false;
    this.pins.dispose();
    this.enqueue(() => this.stop());
    await this.settled().catch(() => undefined);
  }

  /** The bench's reset control (RST button): IO0 is latched again (hold BOOT for download mode). */
  reset(): Promise<void> {
    this.pins.pulseReset();
    return this.settled();
  }

  holdBoot(held: boolean): void {
    this.pins.holdBoot(held);
  }

  /** DTR/RTS from the host side of the USB-UART bridge (RFC 2217 SET-CONTROL). */
  setModemLines(lines: { dtr?: boolean; rts?: boolean }): void {
    this.pins.setLines(lines);
  }

  /** esp_restart() or the watchdog of the running firmware: the chip restarts from flash. */
  softwareReset(): Promise<void> {
    this.enqueue(async () => {
      await this.stop();
      await this.run('flash', 'software');
    });
    return this.settled();
  }

  /** Bytes arriving on UART0's RX line. */
  receive(bytes: Uint8Array): void {
    if (this.mode === 'download') return this.rx.push(bytes);
    if (this.mode !== 'app' && this.mode !== 'starting') return;
    if (this.app) this.app.receive(bytes);
    else this.pending.push(bytes.slice());
  }

  /** RFC 2217 PURGE-DATA (receive side): what is still on the wire towards the chip is dropped. */
  purgeReceive(): void {
    this.rx.clear();
  }

  /** A console line of the running firmware (the app's UART output is not paced; its console runs at 115200). */
  transmitLine(line: string): void {
    this.o.transmit(new TextEncoder().encode(line + '\n'), ROM_BAUD);
  }

  private line(text: string): void {
    if (this.mode === 'download') this.tx.push(new TextEncoder().encode(text + '\r\n'));
    else this.transmitLine(text);
  }

  private async stop(): Promise<void> {
    const app = this.app;
    this.app = null;
    this.closeLoader();
    this.pending.length = 0;
    this.mode = 'off';
    await app?.stop();
  }

  private closeLoader(): void {
    this.loader?.close();
    this.loader = null;
    this.loaderFlash?.close();
    this.loaderFlash = null;
    this.rx.clear();
    this.tx.clear();
    this.slip.reset();
    this.rx.baud = ROM_BAUD;
    this.tx.baud = ROM_BAUD;
  }

  private async run(mode: BootMode, reset: ResetReason): Promise<void> {
    if (!this.powered) return;
    if (mode === 'download') return this.enterDownload(reset);
    this.mode = 'starting';
    this.halted = undefined;
    try {
      this.app = await this.o.startApp(reset);
    } catch (err) {
      if (!(err instanceof BootFailure)) throw err;
      this.mode = 'halted';
      this.halted = err.message;
      return;
    }
    this.mode = 'app';
    for (const bytes of this.pending.splice(0)) this.app.receive(bytes);
  }

  private enterDownload(reset: ResetReason): void {
    this.mode = 'download';
    new BootLog((text) => this.line(text)).romBanner(reset, 'download');
    this.line('waiting for download');
    this.loaderFlash = FlashImage.open(this.o.flashImage, this.o.flashSizeBytes);
    this.loader = new RomLoader({
      flash: this.loaderFlash,
      chip: this.o.chip,
      registers: new Esp32s3Registers({ efuses: this.o.efuses, flashSizeBytes: this.o.flashSizeBytes }),
      send: (packet) => this.tx.push(slipEncode(packet)),
      setBaud: (baud) => {
        this.rx.baud = baud;
        this.tx.baud = baud;
      },
      // Leaving the loader (FLASH_END, RUN_USER_CODE): the ROM resets the chip into the app once its
      // last response is out.
      leave: () => void this.tx.drained().then(() => this.softwareReset()),
    });
  }
}
