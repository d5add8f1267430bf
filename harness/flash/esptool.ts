// Unmodified esptool-js driving a serial port of ours (a local port or pseudo-terminal, an RFC 2217
// port): connect (reset into download mode, sync, detect the chip, upload the stub, raise the baud
// rate), then whatever the caller does with the loader, then the reset. Reset sequences are data,
// as in esptool-js's own CustomReset.
import { createHash } from 'node:crypto';
import { ESPLoader, Transport, type IEspLoaderTerminal } from 'esptool-js';
import type { WebSerialPortLike } from './web-serial.ts';

/**
 * esptool's HardReset (EN low 100 ms: RTS asserted with DTR released). esptool-js 0.7.0's
 * 'hard_reset' only releases RTS, which resets nothing on a DevKitC's auto-reset circuit after the
 * classic sequence, so the sequence is given explicitly.
 */
export const HARD_RESET_SEQUENCE = 'D0|R1|W100|R0';

export interface EsptoolSession {
  port: WebSerialPortLike;
  /**
   * default_reset: the classic DTR/RTS sequence (RFC 2217, a USB bridge); usb_reset: the ESP32-S3's
   * USB-Serial/JTAG sequence; no_reset: the board already waits for download (boot control).
   */
  before: 'default_reset' | 'usb_reset' | 'no_reset';
  /** hard_reset: `hardResetSequence` over DTR/RTS; stay: the stub keeps running, the caller resets the board. */
  after: 'hard_reset' | 'stay';
  /** The hard reset as data (harness/transport/reset-sequence.ts); HARD_RESET_SEQUENCE by default. */
  hardResetSequence?: string;
  /** The rate after CHANGE_BAUDRATE (esptool-js starts at the ROM's 115200). */
  baudRate?: number;
  log?: (line: string) => void;
}

/** esptool-js 0.7.0 prints two TRACE lines on stdout whenever its read loop ends, tracing or not. */
class QuietTransport extends Transport {
  override trace(message: string): void {
    if (this.tracing) super.trace(message);
  }
}

export interface EsptoolResult<T> {
  /** As esptool-js describes the chip, e.g. "ESP32-S3 (QFN56) (revision v0.2)". */
  chip: string;
  mac: string;
  flashId: number;
  value: T;
  transcript: string[];
}

export async function withEsptool<T>(s: EsptoolSession, work: (loader: ESPLoader) => Promise<T>): Promise<EsptoolResult<T>> {
  const transcript: string[] = [];
  const terminal: IEspLoaderTerminal = {
    clean: () => undefined,
    writeLine: (line: string) => {
      transcript.push(line);
      s.log?.(line);
    },
    write: (text: string) => {
      transcript.push(text);
    },
  };
  // esptool-js types the device as a browser SerialPort; ours has the members its Transport uses.
  const transport = new QuietTransport(s.port as never, false);
  const loader = new ESPLoader({ transport, baudrate: s.baudRate ?? 921_600, romBaudrate: 115_200, terminal, debugLogging: false });
  try {
    const chip = await loader.main(s.before);
    const mac = await loader.chip.readMac(loader);
    const flashId = await loader.readFlashId();
    const value = await work(loader);
    if (s.after === 'hard_reset') await loader.after('custom_reset', undefined, s.hardResetSequence ?? HARD_RESET_SEQUENCE);
    else await loader.after('no_reset_stub');
    return { chip, mac, flashId, value, transcript };
  } finally {
    await transport.disconnect().catch(() => undefined);
  }
}

/** Writes images with verification (SPI_FLASH_MD5 against the MD5 of what was sent). */
export async function writeImages(
  loader: ESPLoader,
  files: { address: number; data: Uint8Array }[],
  compress: boolean,
  o: { eraseAll?: boolean; progress?: (fileIndex: number, written: number, total: number) => void } = {},
): Promise<void> {
  await loader.writeFlash({
    fileArray: files,
    flashMode: 'keep',
    flashFreq: 'keep',
    flashSize: 'keep',
    eraseAll: o.eraseAll ?? false,
    compress,
    ...(o.progress ? { reportProgress: o.progress } : {}),
    calculateMD5Hash: (image: Uint8Array) => createHash('md5').update(image).digest('hex'),
  });
}

/** Connects to the ROM without the stub (reset into download mode as `before` says, sync, detect), runs `work`; the board is left in download mode. */
async function withRom<T>(port: WebSerialPortLike, before: EsptoolSession['before'], work: (loader: ESPLoader) => Promise<T>): Promise<T> {
  const quiet: IEspLoaderTerminal = { clean: () => undefined, writeLine: () => undefined, write: () => undefined };
  const transport = new QuietTransport(port as never, false);
  const loader = new ESPLoader({ transport, baudrate: 115_200, romBaudrate: 115_200, terminal: quiet, debugLogging: false });
  try {
    await loader.connect(before, 7, true);
    return await work(loader);
  } finally {
    await transport.disconnect().catch(() => undefined);
  }
}

/** The chip, its eFuse base MAC and the flash ID (JEDEC RDID) from the ROM, without the stub. The board is left in download mode. */
export function readChipIdentity(port: WebSerialPortLike, before: EsptoolSession['before']): Promise<{ chip: string; description: string; mac: string; flashId: number }> {
  return withRom(port, before, async (loader) => ({
    chip: loader.chip.CHIP_NAME,
    description: await loader.chip.getChipDescription(loader),
    mac: (await loader.chip.readMac(loader)).toUpperCase(),
    flashId: await loader.readFlashId(),
  }));
}

/** The ROM's register access and security info, for the eFuse commands (without the stub). */
export interface RomSession {
  chip: string;
  readReg(address: number): Promise<number>;
  /** `delayAfterUs`: the ROM waits that long after the write (esptool's delay_after_us). */
  writeReg(address: number, value: number, mask?: number, delayAfterUs?: number): Promise<void>;
  securityInfo(): Promise<{ flags: number; flashCryptCnt: number; keyPurposes: number[]; chipId: number | null }>;
}

/** Connects to the ROM (as `before` says) and hands `work` its registers; the board is left in download mode. */
export function withRomSession<T>(port: WebSerialPortLike, before: EsptoolSession['before'], work: (rom: RomSession) => Promise<T>): Promise<T> {
  return withRom(port, before, (loader) =>
    work({
      chip: loader.chip.CHIP_NAME,
      readReg: async (address) => (await loader.readReg(address)) >>> 0,
      writeReg: (address, value, mask = 0xffffffff, delayAfterUs = 0) => loader.writeReg(address, value >>> 0, mask >>> 0, 0, delayAfterUs),
      securityInfo: async () => {
        const info = await loader.getSecurityInfo(false);
        return { flags: info.flags, flashCryptCnt: info.flashCryptCnt, keyPurposes: info.keyPurposes, chipId: info.chipId };
      },
    }),
  );
}

/** What `espefuse summary` reads: registers (READ_REG) at the given addresses and GET_SECURITY_INFO. */
export async function readEfuses(rom: RomSession, addresses: readonly number[]): Promise<{ chip: string; registers: Map<number, number>; security: Awaited<ReturnType<RomSession['securityInfo']>> }> {
  const registers = new Map<number, number>();
  for (const a of addresses) registers.set(a, await rom.readReg(a));
  return { chip: rom.chip, registers, security: await rom.securityInfo() };
}
