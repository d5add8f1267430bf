// RAM download (MEM_BEGIN / MEM_DATA / MEM_END): how esptool uploads its flasher stub into the
// chip's IRAM and DRAM and starts it. A virtual chip executes no Xtensa code, so the stub is
// recognised rather than run: a RAM program whose entry point lies in IRAM it was given is taken to
// be esptool's flasher stub, and the loader then behaves as the stub does (docs/flash-and-boot.md).
import { imageChecksum } from '../../image/app-image.ts';
import { u32 } from '../../image/bytes.ts';
import { regionOf, type ChipSpec } from '../../image/chips.ts';

export class RamDownloadError extends Error {
  override name = 'RamDownloadError';
  constructor(
    readonly fault: 'bad_length' | 'bad_checksum' | 'bad_sequence' | 'not_started' | 'bad_address',
    message: string,
  ) {
    super(message);
  }
}

export class RamDownload {
  private current: { offset: number; size: number; received: number; nextSeq: number } | null = null;
  /** Regions fully received, [start, end). */
  readonly regions: { start: number; end: number }[] = [];

  constructor(private readonly chip: ChipSpec) {}

  /** MEM_BEGIN: total size, number of packets, packet size, memory offset. */
  begin(size: number, offset: number): void {
    const region = regionOf(this.chip, offset);
    if (region !== 'IRAM' && region !== 'DRAM' && region !== 'RTC_IRAM' && region !== 'RTC_DATA') throw new RamDownloadError('bad_address', `0x${offset.toString(16)} is not RAM`);
    this.current = { offset, size, received: 0, nextSeq: 0 };
  }

  /** MEM_DATA: data size u32 | seq u32 | 0 | 0 | data (checksummed). */
  data(data: Uint8Array, checksum: number): void {
    if (!this.current) throw new RamDownloadError('not_started', 'MEM_DATA without MEM_BEGIN');
    if (data.length < 16 || u32(data, 0) !== data.length - 16) throw new RamDownloadError('bad_length', 'the packet length does not match its data');
    if (u32(data, 4) !== this.current.nextSeq) throw new RamDownloadError('bad_sequence', `packet ${u32(data, 4)} where ${this.current.nextSeq} was expected`);
    const payload = data.subarray(16);
    if (imageChecksum(payload) !== (checksum & 0xff)) throw new RamDownloadError('bad_checksum', 'checksum mismatch');
    this.current.received += payload.length;
    this.current.nextSeq++;
    if (this.current.received >= this.current.size) {
      this.regions.push({ start: this.current.offset, end: this.current.offset + this.current.size });
      this.current = null;
    }
  }

  /** MEM_END with an entry point: does that entry start the flasher stub that was uploaded? */
  startsStub(entry: number): boolean {
    return regionOf(this.chip, entry) === 'IRAM' && this.regions.some((r) => entry >= r.start && entry < r.end);
  }
}
