// What a virtual board is made of and handed (board.ts): the build it runs, its identity and fuses,
// its flash, radios and network, and the owner's hooks. A board is a machine: it is handed a built
// firmware and never chooses one (the bench does: harness/virtual-board.ts).
import type { KeyObject } from 'node:crypto';
import type { ChipName } from '../image/chips.ts';
import type { BoardFirmware } from '../sdk-host/firmware-image.ts';
import type { Iface } from '../src/hal/network.ts';
import type { DeviceIdentity } from '../src/hal/system.ts';
import type { Position, VirtualAir } from './air.ts';
import type { ResetReason } from './boot-log.ts';
import type { Efuses } from './efuse.ts';
import type { HeapFigures } from './firmware-process.ts';
import type { FlashTimingOption } from './flash-timing.ts';

export interface SdkBoardOptions {
  /** The firmware build this board runs: the board never chooses or starts a build. */
  firmware: BoardFirmware;
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

/**
 * What the board hands the bench's console reader (probes/console-reader.ts): its UART's lines and
 * bytes. The board never reads them itself; the reader says when a boot has ended (watchBoot).
 */
export interface BootConsole {
  /** Every console line kept so far (the XS trace's lines are added here too). */
  readonly lines: string[];
  /** The factory's set-up typed on the console, awaited before the board counts as booted. */
  readonly factorySetUp: Promise<void> | undefined;
  /** A line of the ROM, the bootloader or the host. */
  line(line: string): void;
  /** The firmware's UART output. */
  firmwareBytes(bytes: Uint8Array): void;
  /** A firmware starts: its boot is settled by the reader. */
  watchBoot(waiter: { resolve(result: unknown): void; reject(err: Error): void }): void;
  /** The boot under way is given up on; false when none was. */
  failBoot(err: Error): boolean;
}
