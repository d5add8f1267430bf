// The ESP32-S3's UART download mode as a flashing tool sees it: the ROM loader's commands, and once
// esptool's flasher stub has been uploaded and "started", the stub's (2 status bytes, the stub-only
// ERASE_FLASH, ERASE_REGION, READ_FLASH, RUN_USER_CODE). Bad packets, bad checksums and regions
// outside the flash get the loader's error status, never a crash. Commands run one at a time, in
// order; READ_FLASH acknowledgements bypass the queue, as they answer the stub mid-command.
import { createHash } from 'node:crypto';
import { u32 } from '../../image/bytes.ts';
import type { ChipSpec } from '../../image/chips.ts';
import { FlashRangeError, type FlashImage } from '../flash-image.ts';
import { DownloadError, FlashDownload, type DownloadFault } from './flash-download.ts';
import { CMD, encodeResponse, parseRequest, ROM_ERROR, STUB_ERROR, STUB_GREETING, SYNC_PAYLOAD, words } from './protocol.ts';
import { RamDownload, RamDownloadError } from './ram-download.ts';
import { ReadFlashSession } from './read-flash.ts';
import type { Esp32s3Registers } from './registers.ts';

export interface RomLoaderOptions {
  flash: FlashImage;
  chip: ChipSpec;
  registers: Esp32s3Registers;
  /** One response packet (the UART SLIP-encodes it and sends it at its baud rate). */
  send(packet: Uint8Array): void;
  /** CHANGE_BAUDRATE, once its response has gone out at the old rate. */
  setBaud(baud: number): void;
  /** Leaving the loader: 'reset' reboots the chip (strapping pins sampled again), 'run' starts the app. */
  leave(how: 'reset' | 'run'): void;
}

/** A fault and the error value each loader sends for it. */
const ERRORS: Record<DownloadFault | 'malformed' | 'unknown' | 'not_in_flash_mode', [rom: number, stub: number]> = {
  malformed: [ROM_ERROR.INVALID_MESSAGE, STUB_ERROR.BAD_DATA_LEN],
  unknown: [ROM_ERROR.INVALID_MESSAGE, STUB_ERROR.CMD_NOT_IMPLEMENTED],
  not_in_flash_mode: [ROM_ERROR.INVALID_MESSAGE, STUB_ERROR.NOT_IN_FLASH_MODE],
  bad_length: [ROM_ERROR.INVALID_MESSAGE, STUB_ERROR.BAD_DATA_LEN],
  bad_checksum: [ROM_ERROR.INVALID_CRC, STUB_ERROR.BAD_DATA_CHECKSUM],
  bad_sequence: [ROM_ERROR.INVALID_MESSAGE, STUB_ERROR.BAD_DATA_LEN],
  out_of_range: [ROM_ERROR.FAILED_TO_ACT, STUB_ERROR.BAD_DATA_LEN],
  write_failed: [ROM_ERROR.FLASH_WRITE, STUB_ERROR.FAILED_SPI_OP],
  inflate: [ROM_ERROR.DEFLATE, STUB_ERROR.INFLATE_ERROR],
  too_much: [ROM_ERROR.FAILED_TO_ACT, STUB_ERROR.TOO_MUCH_DATA],
  not_enough: [ROM_ERROR.FAILED_TO_ACT, STUB_ERROR.NOT_ENOUGH_DATA],
};

class CommandFault extends Error {
  constructor(readonly fault: keyof typeof ERRORS) {
    super(fault);
  }
}

/** The value the ROM puts in SYNC responses (non-zero; the stub sends 0, which is how esptool tells them apart). */
const ROM_SYNC_VALUE = 0x20120707;
/** The ROM answers one SYNC with several responses; esptool reads and drops the extra ones. */
const ROM_SYNC_RESPONSES = 8;

export class RomLoader {
  stubRunning = false;
  private queue: Promise<void> = Promise.resolve();
  private download: FlashDownload | null = null;
  private readonly ram: RamDownload;
  private reading: ReadFlashSession | null = null;
  private closed = false;

  constructor(private readonly o: RomLoaderOptions) {
    this.ram = new RamDownload(o.chip);
  }

  /** A packet from the SLIP decoder. */
  receive(packet: Uint8Array): void {
    if (this.closed) return;
    if (this.reading && !this.reading.done && this.reading.ack(packet)) return;
    this.queue = this.queue.then(() => this.handle(packet)).catch(() => undefined);
  }

  /** Resolves once every packet received so far has been handled. */
  idle(): Promise<void> {
    return this.queue;
  }

  close(): void {
    this.closed = true;
    this.download?.abort();
    this.download = null;
  }

  private status(ok: boolean, error = 0): Uint8Array {
    return this.stubRunning ? Uint8Array.from([ok ? 0 : 1, error]) : Uint8Array.from([ok ? 0 : 1, error, 0, 0]);
  }

  private respond(command: number, data: Uint8Array = new Uint8Array(0), value = 0): void {
    if (!this.closed) this.o.send(encodeResponse(command, value, data, this.status(true)));
  }

  private refuse(command: number, fault: keyof typeof ERRORS): void {
    const [rom, stub] = ERRORS[fault];
    if (!this.closed) this.o.send(encodeResponse(command, 0, new Uint8Array(0), this.status(false, this.stubRunning ? stub : rom)));
  }

  private async handle(packet: Uint8Array): Promise<void> {
    if (this.closed) return;
    const request = parseRequest(packet);
    if (!request) return; // not a request: the ROM ignores it
    const { command, data, checksum } = request;
    if (!request.sizeMatches) return this.refuse(command, 'malformed');
    try {
      await this.run(command, data, checksum);
    } catch (err) {
      if (err instanceof CommandFault) return this.refuse(command, err.fault);
      if (err instanceof DownloadError) return this.refuse(command, err.fault);
      if (err instanceof RamDownloadError) return this.refuse(command, err.fault === 'bad_checksum' ? 'bad_checksum' : err.fault === 'not_started' ? 'not_in_flash_mode' : 'malformed');
      if (err instanceof FlashRangeError) return this.refuse(command, 'out_of_range');
      throw err;
    }
  }

  private need(data: Uint8Array, bytes: number): void {
    if (data.length < bytes) throw new CommandFault('malformed');
  }

  private async run(command: number, data: Uint8Array, checksum: number): Promise<void> {
    const stubOnly = command >= CMD.ERASE_FLASH && command <= CMD.RUN_USER_CODE;
    if (stubOnly && !this.stubRunning) throw new CommandFault('unknown');
    switch (command) {
      case CMD.SYNC: {
        if (data.length !== SYNC_PAYLOAD.length || !data.every((b, i) => b === SYNC_PAYLOAD[i])) return; // not a sync: no answer
        const n = this.stubRunning ? 1 : ROM_SYNC_RESPONSES;
        for (let i = 0; i < n; i++) this.respond(command, undefined, this.stubRunning ? 0 : ROM_SYNC_VALUE);
        return;
      }
      case CMD.READ_REG:
        this.need(data, 4);
        return this.respond(command, undefined, this.o.registers.read(u32(data, 0)));
      case CMD.WRITE_REG:
        if (data.length === 0 || data.length % 16 !== 0) throw new CommandFault('malformed');
        for (let at = 0; at < data.length; at += 16) this.o.registers.write(u32(data, at), u32(data, at + 4), u32(data, at + 8));
        return this.respond(command);
      case CMD.SPI_ATTACH:
        this.need(data, this.stubRunning ? 4 : 8);
        return this.respond(command);
      case CMD.SPI_SET_PARAMS:
        this.need(data, 24);
        return this.respond(command);
      case CMD.GET_SECURITY_INFO:
        return this.respond(command, this.o.registers.efuses.securityInfo(this.o.chip.imageChipId));
      case CMD.CHANGE_BAUDRATE: {
        this.need(data, 8);
        const [baud] = words(data, 1);
        if (!baud || baud < 300 || baud > 5_000_000) throw new CommandFault('malformed');
        this.respond(command);
        this.o.setBaud(baud);
        return;
      }
      case CMD.FLASH_BEGIN:
      case CMD.FLASH_DEFL_BEGIN: {
        this.need(data, 16);
        const [size, blocks, blockSize, offset] = words(data, 4) as [number, number, number, number];
        this.download?.abort();
        this.download = null;
        this.download = new FlashDownload(this.o.flash, offset, size, blocks, blockSize, command === CMD.FLASH_DEFL_BEGIN);
        return this.respond(command);
      }
      case CMD.FLASH_DATA:
      case CMD.FLASH_DEFL_DATA: {
        const d = this.download;
        if (!d || d.compressed !== (command === CMD.FLASH_DEFL_DATA)) throw new CommandFault('not_in_flash_mode');
        await d.block(data, checksum);
        return this.respond(command);
      }
      case CMD.FLASH_END:
      case CMD.FLASH_DEFL_END: {
        this.need(data, 4);
        const stay = u32(data, 0) !== 0;
        const d = this.download;
        this.download = null;
        // The stub checks that a compressed stream delivered everything; the ROM's size is the erase size.
        d?.finish(this.stubRunning && d.compressed);
        this.respond(command);
        if (!stay) this.o.leave('reset');
        else if (!this.stubRunning) this.o.leave('run');
        return;
      }
      case CMD.MEM_BEGIN: {
        this.need(data, 16);
        const [size, , , offset] = words(data, 4) as [number, number, number, number];
        this.ram.begin(size, offset);
        return this.respond(command);
      }
      case CMD.MEM_DATA:
        this.ram.data(data, checksum);
        return this.respond(command);
      case CMD.MEM_END: {
        this.need(data, 8);
        const [noEntry, entry] = words(data, 2) as [number, number];
        this.respond(command);
        if (noEntry === 0 && this.ram.startsStub(entry)) {
          this.stubRunning = true;
          this.o.send(STUB_GREETING);
        }
        return;
      }
      case CMD.SPI_FLASH_MD5: {
        this.need(data, 16);
        const [offset, size] = words(data, 2) as [number, number];
        const digest = createHash('md5').update(this.o.flash.read(offset, size)).digest();
        // The stub answers 16 raw bytes, the ROM 32 hex characters.
        return this.respond(command, this.stubRunning ? new Uint8Array(digest) : new TextEncoder().encode(digest.toString('hex')));
      }
      case CMD.ERASE_FLASH:
        this.o.flash.erase(0, this.o.flash.size);
        return this.respond(command);
      case CMD.ERASE_REGION: {
        this.need(data, 8);
        const [offset, size] = words(data, 2) as [number, number];
        if (offset % 0x1000 !== 0 || size % 0x1000 !== 0) throw new CommandFault('bad_length');
        this.o.flash.erase(offset, size);
        return this.respond(command);
      }
      case CMD.READ_FLASH: {
        this.need(data, 16);
        const [offset, length, packetBytes, maxUnacked] = words(data, 4) as [number, number, number, number];
        if (offset + length > this.o.flash.size || packetBytes === 0 || maxUnacked === 0) throw new CommandFault('bad_length');
        this.respond(command);
        this.reading = new ReadFlashSession(this.o.flash, offset, length, packetBytes, maxUnacked, (p) => this.o.send(p));
        this.reading.start();
        return;
      }
      case CMD.RUN_USER_CODE:
        this.o.leave('run');
        return;
      default:
        throw new CommandFault('unknown');
    }
  }
}
