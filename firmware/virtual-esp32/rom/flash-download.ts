// A flash download in the UART bootloader (esptool docs, "Serial Protocol", Writing Data):
// FLASH_BEGIN or FLASH_DEFL_BEGIN names the region and the blocks to come; the ROM erases the
// region right away, the stub as it goes (same result here: the sectors are erased before the first
// byte is written); each FLASH_DATA / FLASH_DEFL_DATA block is checked (length, checksum, sequence)
// and written (deflate-compressed blocks through one zlib stream); FLASH_END / FLASH_DEFL_END close it.
// Failures carry the loader's error code (ROM or stub numbering, chosen by the caller).
import { constants, createInflate, type Inflate } from 'node:zlib';
import { imageChecksum } from '../../image/app-image.ts';
import { u32 } from '../../image/bytes.ts';
import { FLASH_SECTOR_BYTES, type FlashImage } from '../flash-image.ts';

export type DownloadFault = 'bad_length' | 'bad_checksum' | 'bad_sequence' | 'out_of_range' | 'write_failed' | 'inflate' | 'too_much' | 'not_enough';

export class DownloadError extends Error {
  override name = 'DownloadError';
  constructor(
    readonly fault: DownloadFault,
    message: string,
  ) {
    super(message);
  }
}

/** Streams deflate data through zlib, handing back what each block inflates to. */
class Inflater {
  private readonly z: Inflate = createInflate();
  private out: Buffer[] = [];
  private failure: Error | null = null;
  private pending: ((err: Error | null) => void) | null = null;

  constructor() {
    this.z.on('data', (c: Buffer) => this.out.push(c));
    this.z.on('error', (err: Error) => {
      this.failure = err;
      this.pending?.(err);
    });
  }

  push(chunk: Uint8Array): Promise<Uint8Array> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending = (err) => {
        this.pending = null;
        if (err) return reject(err);
        const all = Buffer.concat(this.out);
        this.out = [];
        resolve(new Uint8Array(all.buffer, all.byteOffset, all.length));
      };
      this.z.write(chunk);
      this.z.flush(constants.Z_SYNC_FLUSH, () => this.pending?.(this.failure));
    });
  }

  close(): void {
    this.z.destroy();
  }
}

export class FlashDownload {
  private nextSeq = 0;
  /** Bytes written so far, from the region's offset. */
  written = 0;
  private readonly inflater: Inflater | null;

  /**
   * @param size   bytes to write (compressed downloads: the uncompressed total; the ROM rounds it up to the erase size)
   * @param blocks number of data packets announced
   * @param blockSize size of each packet's data
   */
  constructor(
    private readonly flash: FlashImage,
    readonly offset: number,
    readonly size: number,
    readonly blocks: number,
    readonly blockSize: number,
    readonly compressed: boolean,
  ) {
    if (offset % FLASH_SECTOR_BYTES !== 0) throw new DownloadError('out_of_range', `offset 0x${offset.toString(16)} is not on a 4 KB sector`);
    const erase = Math.ceil(size / FLASH_SECTOR_BYTES) * FLASH_SECTOR_BYTES;
    if (offset + erase > flash.size) throw new DownloadError('out_of_range', `0x${size.toString(16)} bytes at 0x${offset.toString(16)} do not fit the ${flash.size / 0x100000} MB flash`);
    flash.erase(offset, erase);
    this.inflater = compressed ? new Inflater() : null;
  }

  /** One FLASH_DATA / FLASH_DEFL_DATA packet: data size u32 | seq u32 | 0 u32 | 0 u32 | data. */
  async block(data: Uint8Array, checksum: number): Promise<void> {
    if (data.length < 16) throw new DownloadError('bad_length', 'a data packet needs its 16-byte header');
    const length = u32(data, 0);
    const seq = u32(data, 4);
    const payload = data.subarray(16);
    if (length !== payload.length) throw new DownloadError('bad_length', `the packet says ${length} bytes and carries ${payload.length}`);
    if (imageChecksum(payload) !== (checksum & 0xff)) throw new DownloadError('bad_checksum', `checksum 0x${(checksum & 0xff).toString(16)} does not match the data (0x${imageChecksum(payload).toString(16)})`);
    if (seq !== this.nextSeq) throw new DownloadError('bad_sequence', `packet ${seq} where ${this.nextSeq} was expected`);
    let bytes: Uint8Array = payload;
    if (this.inflater) {
      try {
        bytes = await this.inflater.push(payload);
      } catch (err) {
        throw new DownloadError('inflate', `inflate: ${(err as Error).message}`);
      }
    }
    const room = Math.ceil(this.size / FLASH_SECTOR_BYTES) * FLASH_SECTOR_BYTES - this.written;
    if (bytes.length > room) {
      // esptool pads the last uncompressed block to the block size with 0xFF: programming 0xFF changes
      // nothing, so that padding is dropped; real data past the region is refused.
      if (!bytes.subarray(room).every((b) => b === 0xff)) throw new DownloadError('too_much', `${this.written + bytes.length} bytes for a region of ${this.size}`);
      bytes = bytes.subarray(0, room);
    }
    const at = this.offset + this.written;
    this.flash.program(at, bytes);
    // The ROM reads the block back and compares it (a region not erased comes back different).
    const back = this.flash.read(at, bytes.length);
    if (!back.every((b, i) => b === bytes[i])) throw new DownloadError('write_failed', `flash at 0x${at.toString(16)} reads back different data`);
    this.written += bytes.length;
    this.nextSeq++;
  }

  /** FLASH_END / FLASH_DEFL_END: a compressed stream must have delivered every announced byte. */
  finish(exact: boolean): void {
    this.inflater?.close();
    if (exact && this.written < this.size) throw new DownloadError('not_enough', `${this.written} of ${this.size} bytes arrived`);
  }

  abort(): void {
    this.inflater?.close();
  }
}
