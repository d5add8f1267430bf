// A virtual board: a virtual ESP32-S3 (firmware/virtual-esp32/virtual-esp32.ts) whose firmware is the
// Moddable SDK's host build of the product (SdkBoard, firmware/virtual-esp32/board.ts) with its flash
// image and file system, fuse key and radios in the shared virtual air.
// Its UART0 is a real pseudo-terminal pair, read and written by the harness through node-serialport
// exactly as a board on a USB adapter, and the same UART is served over RFC 2217 on a loopback port
// (rfc2217Url), where DTR and RTS reach EN and IO0 as through a DevKitC's auto-reset circuit. On the
// pseudo-terminal, which has no modem lines, the bench's boot control (holdBoot + reset) does what
// holding BOOT and pressing RST does. Reboots the firmware asks for go through the bootloader again.
import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { burnSecureBootFuses } from '../firmware/virtual-esp32/boot-signatures.ts';
import type { VirtualAir } from '../firmware/virtual-esp32/air.ts';
import type { ResetReason } from '../firmware/virtual-esp32/boot-log.ts';
import { DEFAULT_BAUD, Rfc2217Server } from '../harness/transport/rfc2217-server.ts';
import { Efuses, manifestHmacKeyBlock } from '../firmware/virtual-esp32/efuse.ts';
import { resample } from '../firmware/chip/uart.ts';
import { VirtualEsp32, type AppHandle, type ChipMode } from '../firmware/virtual-esp32/virtual-esp32.ts';
import { SdkBoard, type SdkBoardOptions } from '../firmware/virtual-esp32/sdk-board.ts';
import { boardFirmware } from '../firmware/sdk-host/firmware-image.ts';
import type { FirmwareSettings } from '../firmware/src/core/settings.ts';
import type { ListenerLimits } from '../firmware/src/platform/moddable/hal/http-limits.ts';
import { CHIPS } from '../firmware/image/chips.ts';
import { displayFrom, eventsFrom, httpAnswer, type BenchBoard, type EventLine, type HttpAnswer, type Iface } from './board.ts';
import { openPtyPair, type PtyPair } from './pty.ts';
import type { BoardSpec } from './rig.ts';
import { SerialConsole } from './serial-console.ts';

// This file is the harness's one door into the emulator (firmware/virtual-esp32/): the benches, the
// power-cut trials and the fuzzer take the board and the air from here.
export { BootFailure, SdkBoard, type FlashOp, type HeapFigures } from '../firmware/virtual-esp32/sdk-board.ts';
export { VirtualAir } from '../firmware/virtual-esp32/air.ts';

/** How an owner starts an SdkBoard: the build is named (the identity, a rig's settings and limits), and built here. */
export interface SdkBoardStart extends Omit<SdkBoardOptions, 'firmware'> {
  /** The build's settings (config "settings"): boards with other settings run another build. */
  settings?: Partial<FirmwareSettings>;
  /** The build's listener limits (config "http"). */
  httpLimits?: Partial<ListenerLimits>;
  /** The secure_version in the descriptor of the first app the factory writes (default 0). */
  factorySecureVersion?: number;
}

/** Builds (or finds built) the firmware the options name, and powers a board on with it (SdkBoard.start). */
export async function startSdkBoard(o: SdkBoardStart): Promise<SdkBoard> {
  const { settings, httpLimits, factorySecureVersion, ...board } = o;
  const firmware = await boardFirmware(o.identity, {
    ...(settings ? { settings: settings as Record<string, number> } : {}),
    ...(httpLimits ? { http: httpLimits as Record<string, number> } : {}),
    ...(o.chip ? { chip: o.chip } : {}),
    ...(factorySecureVersion ? { secureVersion: factorySecureVersion } : {}),
  });
  return SdkBoard.start({ ...board, firmware });
}

export interface VirtualEnvironment {
  air: VirtualAir;
  workDir: string;
  /** Firmware settings for every virtual board (e.g. shorter display times on a bench). */
  settings?: Record<string, unknown>;
  /** Secure boot and anti-rollback for every virtual board (`fleet virtual --secure-boot-key`, docs/secure-boot.md). */
  secureBoot?: VirtualSecureBoot;
}

/**
 * What a board's factory does for secure boot, and how its bootloader is built: the keys' digests
 * burned as SECURE_BOOT_DIGEST0.. and SECURE_BOOT_EN (at the chip's first start: eFuses are burned
 * once and kept across resets and power cycles), the factory bootloader and app signed with the
 * first key, which must be a private key; SECURE_VERSION burned and written as the factory app's
 * secure_version; the bootloader built with CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK.
 */
export interface VirtualSecureBoot {
  keys?: KeyObject[];
  antiRollback?: boolean;
  secureVersion?: number;
}

/** The SdkBoard options of a board whose factory and bootloader are set up for secure boot. */
function secureBootFactory(sb: VirtualSecureBoot | undefined): Pick<SdkBoardStart, 'antiRollback' | 'factorySigningKey' | 'factorySecureVersion'> {
  if (!sb) return {};
  const signer = sb.keys?.[0];
  if (signer && signer.type !== 'private') throw new Error('secure boot: the first key signs the factory images, so it must be a private key');
  return { ...(sb.antiRollback ? { antiRollback: true } : {}), ...(signer ? { factorySigningKey: signer } : {}), ...(sb.secureVersion ? { factorySecureVersion: sb.secureVersion } : {}) };
}

/** Where the boards' RFC 2217 ports listen. */
const RFC2217_HOST = '127.0.0.1';

export class VirtualBoard implements BenchBoard {
  private xs: SdkBoard | undefined;
  /** The listeners' ports, kept across resets (the board's port 80: its URLs stay). */
  private readonly listenerPorts = new Map<string, number>();
  /** Powers off the firmware of a start under way (stop). */
  private starting: AbortController | undefined;
  private chip: VirtualEsp32 | undefined;
  /** The chip's eFuses: its ROM loader and its firmware's HMAC read this one model (kept across power cycles). */
  private efuses: Efuses | undefined;
  private rfc2217: Rfc2217Server | undefined;
  private pty: PtyPair | undefined;
  private uart: SerialPort | undefined;
  private console: SerialConsole | undefined;
  /** UART bytes written since the console opened, which it has to read (consoleCaughtUp). */
  private consoleOwed = 0;
  private stopped = false;
  /** Every reboot the firmware asked for, with its reason. */
  readonly reboots: string[] = [];
  /** The firmware's CPU time (ms) at the end of each boot. */
  readonly bootCpuMs: number[] = [];

  constructor(
    readonly spec: BoardSpec,
    private readonly env: VirtualEnvironment,
  ) {}

  get engine(): SdkBoard {
    if (!this.xs) throw new Error(`board ${this.spec.id} is not running${this.chip?.halted ? ` (${this.chip.halted})` : this.chip ? ` (${this.chip.mode})` : ''}`);
    return this.xs;
  }

  /** The chip's eFuse model (its ROM loader's and its firmware's); undefined before the first start. */
  get eFuses(): Efuses | undefined {
    return this.efuses;
  }

  /** off, starting, app (the firmware runs), download (the ROM waits for a flashing tool), halted (nothing bootable). */
  get mode(): ChipMode {
    return this.chip?.mode ?? 'off';
  }

  /** Why the board does not run, as its console said (no bootable app, a boot loop). */
  get halted(): string | undefined {
    return this.chip?.halted;
  }

  /** The flash image file (the whole 8 MB flash, as `esptool read_flash 0 0x800000` would dump it). */
  get flashImagePath(): string {
    return `${this.flashDir}.bin`;
  }

  private get flashDir(): string {
    return join(this.env.workDir, `${this.spec.id}-flash`);
  }

  /** The harness end of the console's pseudo-terminal; a flashing tool opens it after releaseConsole(). */
  get consolePath(): string {
    if (!this.pty) throw new Error(`board ${this.spec.id} is not started`);
    return this.pty.harnessEnd;
  }

  /** rfc2217://127.0.0.1:<port>: the same console, with DTR/RTS. */
  get rfc2217Url(): string {
    if (!this.rfc2217) throw new Error(`board ${this.spec.id} is not started`);
    return this.rfc2217.url;
  }

  async start(): Promise<void> {
    this.stopped = false;
    if (!this.pty) {
      this.pty = await openPtyPair(this.env.workDir, this.spec.id);
      this.uart = new SerialPort({ path: this.pty.boardEnd, baudRate: 115200, autoOpen: false, hupcl: false });
      await new Promise<void>((resolve, reject) => this.uart!.open((e) => (e ? reject(e) : resolve())));
      this.uart.on('data', (chunk: Buffer) => this.chip?.receive(chunk));
      this.console = await SerialConsole.open(this.pty.harnessEnd);
      this.consoleOwed = 0;
    }
    if (!this.chip) {
      const s = this.spec;
      if (!this.efuses) {
        const efuses = new Efuses({ macAddress: s.wifiMac, hmacKey: Buffer.from(s.fuseKey!, 'hex'), hmacKeyBlock: manifestHmacKeyBlock() });
        const sb = this.env.secureBoot;
        secureBootFactory(sb); // refuses a public first key before anything is burned
        if (sb) burnSecureBootFuses(efuses, { ...(sb.keys ? { keys: sb.keys } : {}), ...(sb.secureVersion !== undefined ? { secureVersion: sb.secureVersion } : {}) });
        this.efuses = efuses;
      }
      /** The host side of the RFC 2217 line: the rate the client set; the chip's UART has its own. */
      let hostBaud = DEFAULT_BAUD;
      this.chip = new VirtualEsp32({
        chip: CHIPS[s.chip],
        flashImage: this.flashImagePath,
        flashSizeBytes: s.flashSizeBytes,
        efuses: this.efuses,
        startApp: (reset) => this.startApp(reset),
        transmit: (bytes, baud) => {
          // The pseudo-terminal carries no rate (its reader is at the chip's); the RFC 2217 client reads at its own.
          if (this.uart?.isOpen) {
            this.uart.write(Buffer.from(bytes));
            if (this.console) this.consoleOwed += bytes.length;
          }
          this.rfc2217?.write(resample(bytes, baud, hostBaud));
        },
      });
      this.rfc2217 = await Rfc2217Server.listen(RFC2217_HOST, {
        data: (bytes) => this.chip?.receive(resample(bytes, hostBaud, this.chip.baud)),
        control: (lines) => this.chip?.setModemLines(lines),
        baud: (rate) => void (hostBaud = rate),
        purgeReceive: () => this.chip?.purgeReceive(),
      });
    }
    await this.chip.powerOn();
    await this.consoleCaughtUp();
  }

  /**
   * Resolves once the console has read what the board wrote on its UART so far (the pseudo-terminal
   * is a hop behind the chip): a command typed after a boot must not take an answer of the boot's
   * (the factory's `password`) for its own.
   */
  private async consoleCaughtUp(): Promise<void> {
    const until = Date.now() + 2000;
    while (this.console && this.console.receivedBytes < this.consoleOwed && Date.now() < until) await new Promise((r) => setTimeout(r, 2));
  }

  /** ROM, bootloader and firmware of the slot it picks (the chip calls this when IO0 was high at reset). */
  private async startApp(reset: ResetReason): Promise<AppHandle> {
    const s = this.spec;
    const starting = new AbortController();
    this.starting = starting;
    const xs = await startSdkBoard({
      signal: starting.signal,
      reset,
      identity: {
        uuid: s.uuid,
        role: s.role,
        wifiMac: s.wifiMac,
        ...(s.ethernetMac ? { ethernetMac: s.ethernetMac } : {}),
        hardwareClass: s.hardwareClass,
        productHex: s.productHex,
        firmwareVersion: s.firmwareVersion,
        build: s.build,
      },
      efuses: this.efuses!,
      ...secureBootFactory(this.env.secureBoot),
      flashDir: this.flashDir,
      chip: s.chip,
      flashSizeBytes: s.flashSizeBytes,
      adminPassword: s.adminPassword,
      air: this.env.air,
      position: s.position,
      listenerPorts: this.listenerPorts,
      // The figure runs report what the firmware held live (harness/scale.ts).
      heapSampleMs: 250,
      settings: this.env.settings ?? {},
      onConsoleLine: (line) => this.chip?.transmitLine(line),
      onReboot: (reason) => {
        this.reboots.push(reason);
        // esp_restart(): a software reset, through the bootloader again.
        if (!this.stopped) void this.chip?.softwareReset();
      },
    });
    if (this.starting === starting) this.starting = undefined;
    this.xs = xs;
    this.bootCpuMs.push(xs.cpuMs());
    return {
      receive: (bytes) => xs.uartReceive(bytes),
      stop: async () => {
        if (this.xs === xs) this.xs = undefined;
        await xs.close();
      },
    };
  }

  /** Power-cycles the board (the bench's reset control); with BOOT held it comes up in download mode. */
  async reset(): Promise<void> {
    if (!this.chip) throw new Error(`board ${this.spec.id} is not started`);
    await this.chip.settled();
    await this.chip.reset();
    await this.consoleCaughtUp();
  }

  /** The bench's boot control on a board without modem lines: hold BOOT (IO0 low) over the next reset. */
  holdBoot(held: boolean): void {
    this.chip?.holdBoot(held);
  }

  /** Resolves once resets under way (a reboot the firmware asked for, one over RFC 2217) are done. */
  async settled(): Promise<void> {
    await this.chip?.settled();
    await this.consoleCaughtUp();
  }

  /** Lets a flashing tool have the console's pseudo-terminal (as closing a serial monitor does). */
  async releaseConsole(): Promise<void> {
    await this.console?.close();
    this.console = undefined;
  }

  async attachConsole(): Promise<void> {
    if (this.console) return;
    this.console = await SerialConsole.open(this.consolePath);
    this.consoleOwed = 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // A firmware still booting is powered off too, not waited for.
    this.starting?.abort();
    this.starting = undefined;
    await this.chip?.powerOff().catch(() => undefined);
    this.chip = undefined;
    await this.rfc2217?.close();
    this.rfc2217 = undefined;
    this.xs = undefined;
    await this.console?.close();
    this.console = undefined;
    await new Promise<void>((r) => (this.uart?.isOpen ? this.uart.close(() => r()) : r()));
    await this.pty?.close();
    this.pty = undefined;
  }

  consoleLines(): string[] {
    return this.console?.lines ?? [];
  }

  hostLines(): string[] {
    return this.xs ? this.xs.consoleLines.filter((l) => l.startsWith('XS ') || l.startsWith('HOST ')) : [];
  }

  command(line: string, timeoutMs?: number): Promise<string> {
    if (!this.console) throw new Error(`board ${this.spec.id} has no console attached`);
    return this.console.command(line, timeoutMs);
  }

  waitForLine(pattern: RegExp, timeoutMs: number, fromIndex = 0): Promise<string> {
    if (!this.console) throw new Error(`board ${this.spec.id} has no console attached`);
    return this.console.waitFor(pattern, timeoutMs, fromIndex);
  }

  async http(iface: Iface, method: string, path: string, o: { headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<HttpAnswer> {
    const base = this.engine.urls[iface];
    if (!base) throw new Error(`board ${this.spec.id} has no ${iface} listener`);
    return httpAnswer(await fetch(base + path, { method, headers: o.headers ?? {}, body: o.body }));
  }

  display(): string[] {
    return displayFrom(this.consoleLines());
  }

  events(): EventLine[] {
    return eventsFrom(this.consoleLines());
  }

  moveTo(position: { x: number; y: number }): void {
    this.spec.position = position;
    if (this.xs) this.xs.position = position;
  }
}
