// Flashing one board, as `fleet flash` and `fleet bench --flash` do it: esptool-js over our transport
// (reset into download mode as the board's reset method says, detect the chip, stub, baud change),
// the chip and the plan checked against what was found, write with MD5 verification, then our own
// hard reset on the same connection and the firmware's boot line read from the console
// (`LOG INFO boot: <role> <uuid> firmware <version> (<build>)`, docs/serial-console.md).
import { basename } from 'node:path';
import type { ESPLoader } from 'esptool-js';
import { chipByName, CHIPS, type ChipName } from '../../firmware/image/chips.ts';
import type { PartitionEntry } from '../../firmware/image/partition-table.ts';
import { TimeoutError } from '../transport/transport.ts';
import { SerialConsole } from '../serial-console.ts';
import { runResetSequence, SEQUENCES, type ResetMethod } from '../transport/reset-sequence.ts';
import { NoModemLinesError, PortUnavailableError, type SerialTransport } from '../transport/transport.ts';
import { withEsptool } from './esptool.ts';
import { checkPlan, FlashInputError, ImageDoesNotFitError, type FlashFile, type FlashPlan } from './inputs.ts';
import { WebSerialAdapter } from './web-serial.ts';
import { FlashVerifyError, writeChanged, type ImageWritten } from './write-changed.ts';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';

/** `fleet flash` exit codes beyond fleet's own (0 done, 2 usage); rig: a board of `--rig` failed (the summary says which and why). */
export const FLASH_EXIT = Object.freeze({ usage: EXIT_CODES.usage, port: EXIT_CODES.port, no_answer: EXIT_CODES.noAnswer, wrong_chip: EXIT_CODES.flashWrongChip, does_not_fit: EXIT_CODES.flashDoesNotFit, verify: EXIT_CODES.flashVerify, no_boot: EXIT_CODES.flashNoBoot, rig: EXIT_CODES.flashRig });
export type FlashFailure = keyof typeof FLASH_EXIT;

export class FlashError extends Error {
  override name = 'FlashError';
  constructor(
    readonly failure: FlashFailure,
    message: string,
  ) {
    super(message);
  }
  get exitCode(): number {
    return FLASH_EXIT[this.failure];
  }
}

/** The firmware's boot line and the bootloader's "nothing to boot" lines. */
export const BOOT_LINE = /^LOG INFO boot: (\S+) (\S+) firmware (\S+) \((\w+)\)$/;
export const HALT_LINE = /^(invalid header: 0x[0-9a-f]+|E \(\d+\) boot: No bootable app partitions.*)$/;

export interface FlashBoardOptions {
  transport: SerialTransport;
  plan: FlashPlan;
  productTable: PartitionEntry[];
  baudRate: number;
  chip: 'auto' | ChipName;
  resetMethod: ResetMethod;
  eraseAll?: boolean;
  compress?: boolean;
  /** Write every image whole, without asking the chip what it already holds (write-changed.ts). */
  force?: boolean;
  /** Reset into the firmware afterwards and wait for its boot line (false: stay in the stub). */
  reset?: boolean;
  bootTimeoutMs?: number;
  progress?: (file: FlashFile, index: number, written: number, total: number) => void;
  log?: (line: string) => void;
}

export interface FlashOutcome {
  chip: string;
  mac: string;
  flashSizeBytes: number;
  /** Per file: what was written and what was found unchanged and skipped. */
  written: ImageWritten[];
  /** Seconds from opening the port to the image verified (connect, stub, compare, write, verify). */
  seconds: number;
  /** The boot line's fields when the firmware came up. */
  booted?: { role: string; uuid: string; version: string; build: string; line: string };
}

function chipIdOf(data: Uint8Array): number | null {
  return data.length >= 24 && data[0] === 0xe9 ? data[12]! | (data[13]! << 8) : null;
}

/** esptool-js's `before` for a reset method: how the ROM is reached (flashing, and `fleet efuse`). */
export function beforeFor(method: ResetMethod): 'default_reset' | 'usb_reset' | 'no_reset' {
  return method === 'classic' ? 'default_reset' : method === 'usb-jtag' ? 'usb_reset' : 'no_reset';
}

export async function flashBoard(o: FlashBoardOptions): Promise<FlashOutcome> {
  const t = o.transport;
  if (!t.connected) {
    try {
      await t.connect(115200);
    } catch (err) {
      if (err instanceof PortUnavailableError) throw new FlashError('port', err.message);
      throw err;
    }
  }
  const started = performance.now();
  const files = o.plan.files;
  let written: ImageWritten[] = [];
  let flashSizeBytes = 0;
  let detected = '';
  const work = async (loader: ESPLoader) => {
    detected = loader.chip.CHIP_NAME;
    const wanted = o.chip === 'auto' ? (o.plan.chip ? chipByName(o.plan.chip) : undefined) : chipByName(o.chip);
    if (wanted && wanted.displayName !== detected) throw new FlashError('wrong_chip', `the board on ${t.name} is an ${detected}, not an ${wanted.displayName}`);
    const chip = Object.values(CHIPS).find((c) => c.displayName === detected);
    for (const f of files) {
      const id = chipIdOf(f.data);
      if (id !== null && chip && id !== chip.imageChipId) throw new FlashError('wrong_chip', `${basename(f.path)} is built for chip id ${id}, the board on ${t.name} is an ${detected} (chip id ${chip.imageChipId})`);
    }
    const sizeCode = ((await loader.readFlashId()) >> 16) & 0xff;
    flashSizeBytes = sizeCode >= 0x12 && sizeCode <= 0x1a ? 2 ** sizeCode : 0;
    if (flashSizeBytes === 0) throw new FlashError('no_answer', `the flash chip on ${t.name} answered an unknown size code 0x${sizeCode.toString(16)}`);
    try {
      checkPlan(o.plan, o.productTable, flashSizeBytes);
    } catch (err) {
      if (err instanceof ImageDoesNotFitError) throw new FlashError('does_not_fit', err.message);
      if (err instanceof FlashInputError) throw new FlashError('usage', err.message);
      throw err;
    }
    for (const e of o.plan.erase) {
      o.log?.(`erasing ${e.why} at 0x${e.address.toString(16)} (${e.size} bytes)`);
      await loader.checkCommand(`erase ${e.why}`, loader.ESP_ERASE_REGION, Uint8Array.from([...le32(e.address), ...le32(e.size)]));
    }
    written = await writeChanged(loader, files.map((f) => ({ address: f.address, data: f.data })), {
      compress: o.compress ?? true,
      force: o.force ?? false,
      eraseAll: o.eraseAll ?? false,
      progress: (i, done, total) => o.progress?.(files[i]!, i, done, total),
    });
  };
  let run: Awaited<ReturnType<typeof withEsptool>>;
  try {
    run = await withEsptool({ port: new WebSerialAdapter(t), before: beforeFor(o.resetMethod), after: 'stay', baudRate: o.baudRate, ...(o.log ? { log: o.log } : {}) }, work);
  } catch (err) {
    throw asFlashError(err, t.name, o.resetMethod);
  }
  const outcome: FlashOutcome = { chip: run.chip, mac: run.mac.toUpperCase(), flashSizeBytes, written, seconds: (performance.now() - started) / 1000 };
  if (o.reset === false) return outcome;
  outcome.booted = await resetAndWaitForBoot(t, o.resetMethod, o.bootTimeoutMs ?? 30_000);
  return outcome;
}

/** Hard reset (as the reset method does it) and the firmware's boot line, on the same connection at 115200. */
export async function resetAndWaitForBoot(t: SerialTransport, method: ResetMethod, timeoutMs: number): Promise<NonNullable<FlashOutcome['booted']>> {
  const console = new SerialConsole(t);
  try {
    await t.setBaudRate(115200);
    if (SEQUENCES[method].hard === '') throw new FlashError('no_boot', `reset method ${method} cannot reset the board: press its RST button`);
    await runResetSequence(t, SEQUENCES[method].hard);
    let line: string;
    try {
      line = await console.waitFor(new RegExp(`${BOOT_LINE.source}|${HALT_LINE.source}`), timeoutMs);
    } catch (err) {
      if (!(err instanceof TimeoutError)) throw err;
      throw new FlashError('no_boot', `no boot line from the firmware within ${timeoutMs / 1000} s on ${t.name}; last console lines:\n${console.lines.slice(-8).join('\n')}`);
    }
    const m = BOOT_LINE.exec(line);
    if (!m) throw new FlashError('no_boot', `the board did not boot: ${line}\n${console.lines.slice(-12).join('\n')}`);
    return { role: m[1]!, uuid: m[2]!, version: m[3]!, build: m[4]!, line };
  } finally {
    await console.close({ keepTransport: true });
  }
}

/** The sentence for a ROM bootloader that does not answer (flashing, and `fleet efuse`). */
export function noRomAnswer(port: string, method: ResetMethod, esptoolMessage: string): string {
  return `no answer from the ROM bootloader on ${port} (reset method ${method}): is it the board's port, is the board powered, does the reset method fit its wiring? (esptool-js: ${esptoolMessage})`;
}

function asFlashError(err: unknown, port: string, method: ResetMethod): unknown {
  if (err instanceof FlashError) return err;
  if (err instanceof NoModemLinesError) return new FlashError('no_answer', `${err.message}; hold BOOT, press RST and flash with --reset-method none`);
  const message = err instanceof Error ? err.message : String(err);
  if (/Failed to connect with the device/.test(message)) return new FlashError('no_answer', noRomAnswer(port, method, message));
  if (err instanceof FlashVerifyError || /MD5 of file does not match/.test(message)) return new FlashError('verify', `verification failed on ${port}: ${message}`);
  return err;
}

/** `unchanged: fw.bin at 0x10000 (1572864 bytes) skipped` or `fw.bin at 0x10000: wrote 65536 bytes (0x30000+65536), skipped 1507328 unchanged`. */
export function describeWritten(name: string, w: ImageWritten): string {
  const at = `${name} at 0x${w.address.toString(16)}`;
  if (w.regions.length === 0) return `unchanged: ${at} (${w.bytes} bytes) matches the flash, skipped`;
  const wrote = w.regions.reduce((n, [, bytes]) => n + bytes, 0);
  if (w.skippedBytes === 0) return `${at}: wrote ${wrote} bytes`;
  return `${at}: wrote ${wrote} bytes (${w.regions.map(([a, n]) => `0x${a.toString(16)}+${n}`).join(', ')}), skipped ${w.skippedBytes} unchanged`;
}

function le32(v: number): number[] {
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
}
