// A virtual board as a bench uses it: the machine (board.ts: wiring, power, reset, the boot loop)
// with the bench's probes on it (probes/): its console read into lines and events and a line typed
// with its answer, the factory's admin password, the firmware's heaps and CPU time, its SoftAP, panel
// and running image. It starts once the console says the firmware's boot has ended.
import type { Iface } from '../src/hal/network.ts';
import type { DeviceIdentity } from '../src/hal/system.ts';
import type { SdkBoardOptions } from './board-options.ts';
import { BoardMachine } from './board.ts';
import { BootFailure, type BootedApp } from './boot-stage.ts';
import { hasAdminPassword } from './factory.ts';
import type { HeapFigures } from './firmware-process.ts';
import { ConsoleReader } from './probes/console-reader.ts';
import { emptyHeapLive, processCpuMs, takeHeapSample } from './probes/heap.ts';

export { BootFailure } from './boot-stage.ts';
export type { HeapFigures } from './firmware-process.ts';
export type { FlashOp, SdkBoardOptions } from './board-options.ts';
export type { BoardFirmware } from '../sdk-host/firmware-image.ts';

/** How long boot() waits for the firmware's boot to end (a target procedure waits for its source). */
const BOOT_TIMEOUT_MS = 120_000;
/** How long a started controller waits for its Ethernet listener. */
const ETHERNET_UP_MS = 5_000;

export class SdkBoard extends BoardMachine {
  declare protected readonly console: ConsoleReader;
  /** The most the heaps held live (after a collection) in any sample since the firmware started (heapSampleMs). */
  heapLive = emptyHeapLive();

  /**
   * Powers the board on: factory flash on a new board, ROM, bootloader, the chosen image's firmware;
   * resolves once it has booted. Throws BootFailure when no slot holds a bootable image (the console
   * says why) or the image fails at every start.
   */
  static async start(o: SdkBoardOptions): Promise<SdkBoard> {
    const board: SdkBoard = new SdkBoard(
      o,
      new ConsoleReader({
        send: (bytes) => board.uartReceive(bytes),
        ...(o.onConsoleLine ? { onLine: o.onConsoleLine } : {}),
        ...(o.adminPassword ? { adminPassword: o.adminPassword } : {}),
        hasAdminPassword: () => hasAdminPassword(o.flashDir),
      }),
    );
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
    if (this.o.firmware.variant.ethernet) {
      const until = Date.now() + ETHERNET_UP_MS;
      while (!this.urls.ethernet && Date.now() < until && !this.closed) await new Promise((r) => setTimeout(r, 5));
    }
    return this.bootResult;
  }

  /** A firmware starts: the peaks start again, and each of its watchdog's samples feeds them. */
  protected watching(): (figures: HeapFigures) => void {
    this.heapLive = emptyHeapLive();
    return (figures) => {
      takeHeapSample(this.heapLive, figures);
      this.o.onHeapSample?.(figures);
    };
  }
}
