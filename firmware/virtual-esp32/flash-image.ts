// The SPI flash of a virtual board: one file, as large as the chip's flash (8 MB on the product's
// ESP32-S3 boards, DESIGN.md section 7), that survives reboots. It behaves as NOR flash does:
// erasing sets whole 4 KB sectors to 0xFF, programming can only clear bits (new = old AND data), so
// data written without an erase first comes out mixed with what was there, as on a chip. The
// bootloader, the OTA slots and the ROM loader all go through this class.
import { closeSync, existsSync, openSync, readSync, statSync, writeSync } from 'node:fs';

export const FLASH_SECTOR_BYTES = 0x1000;
const FILL_CHUNK_BYTES = 1 << 20;

/** An access outside the flash or off a sector boundary; callers map it to their own error (the ROM's status, ESP_ERR_INVALID_ARG). */
export class FlashRangeError extends RangeError {
  override name = 'FlashRangeError';
}

export class FlashImage {
  private fd: number | null;

  private constructor(
    readonly path: string,
    readonly size: number,
    fd: number,
    /** True when open() made the file: a new board, whose flash the factory has yet to program. */
    readonly created: boolean,
  ) {
    this.fd = fd;
  }

  /** Opens the board's flash file, creating it erased (all 0xFF) when the board is new. */
  static open(path: string, sizeBytes: number): FlashImage {
    if (!Number.isInteger(sizeBytes) || sizeBytes <= 0 || sizeBytes % FLASH_SECTOR_BYTES !== 0) throw new FlashRangeError(`flash size must be a whole number of 4 KB sectors: ${sizeBytes}`);
    if (existsSync(path)) {
      const actual = statSync(path).size;
      if (actual !== sizeBytes) throw new FlashRangeError(`flash image ${path} is ${actual} bytes, but the board's flash is ${sizeBytes} bytes`);
      return new FlashImage(path, sizeBytes, openSync(path, 'r+'), false);
    }
    const fd = openSync(path, 'w+');
    const erased = Buffer.alloc(Math.min(FILL_CHUNK_BYTES, sizeBytes), 0xff);
    for (let at = 0; at < sizeBytes; at += erased.length) writeSync(fd, erased, 0, Math.min(erased.length, sizeBytes - at), at);
    return new FlashImage(path, sizeBytes, fd, true);
  }

  private handle(): number {
    if (this.fd === null) throw new Error(`flash image ${this.path} is closed`);
    return this.fd;
  }

  private check(offset: number, length: number, what: string): void {
    if (!Number.isInteger(offset) || !Number.isInteger(length) || offset < 0 || length < 0 || offset + length > this.size) {
      throw new FlashRangeError(`${what} of ${length} bytes at 0x${offset.toString(16)} is outside the ${this.size / 0x100000} MB flash`);
    }
  }

  read(offset: number, length: number): Uint8Array {
    this.check(offset, length, 'read');
    const out = Buffer.alloc(length);
    let done = 0;
    while (done < length) done += readSync(this.handle(), out, done, length - done, offset + done);
    return new Uint8Array(out.buffer, out.byteOffset, out.length);
  }

  /** Erases whole sectors: both ends must be on a 4 KB boundary (SPI flash sector erase). */
  erase(offset: number, length: number): void {
    this.check(offset, length, 'erase');
    if (offset % FLASH_SECTOR_BYTES !== 0 || length % FLASH_SECTOR_BYTES !== 0) throw new FlashRangeError(`erase of 0x${length.toString(16)} bytes at 0x${offset.toString(16)} is not sector aligned`);
    const erased = Buffer.alloc(Math.min(FILL_CHUNK_BYTES, Math.max(length, 1)), 0xff);
    for (let at = 0; at < length; at += erased.length) writeSync(this.handle(), erased, 0, Math.min(erased.length, length - at), offset + at);
  }

  /** Programs bytes: each bit can only go from 1 to 0 (NOR page program). */
  program(offset: number, data: Uint8Array): void {
    this.check(offset, data.length, 'write');
    const old = this.read(offset, data.length);
    const merged = Buffer.alloc(data.length);
    for (let i = 0; i < data.length; i++) merged[i] = old[i]! & data[i]!;
    writeSync(this.handle(), merged, 0, merged.length, offset);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
