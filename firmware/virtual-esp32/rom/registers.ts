// The registers a flashing tool reads and writes through READ_REG/WRITE_REG on an ESP32-S3
// (addresses from the ESP32-S3 TRM; esptool's and esptool-js's target files read the same ones):
//   - 0x40001000, the ROM word esptool calls CHIP_DETECT_MAGIC_REG (0x9 on the S3);
//   - the eFuse read registers (BLOCK0's fields, BLOCK1's MAC and chip revision, BLOCK2, the key
//     blocks), from the chip's one eFuse model (efuse.ts);
//   - the SPI1 flash controller's user-command registers, enough to answer the JEDEC ID command
//     (RDID 0x9F) the way esptool's flash_id / detect_flash_size drive it.
// Any other address reads as last written, or 0.

import { EFUSE_BASE, type Efuses } from '../efuse.ts';

const CHIP_DETECT_MAGIC_REG = 0x40001000;
const ESP32S3_MAGIC = 0x9;

const SPI1_BASE = 0x60002000;
const SPI_CMD = SPI1_BASE + 0x00;
const SPI_USR2 = SPI1_BASE + 0x20;
const SPI_W0 = SPI1_BASE + 0x58;
/** SPI_CMD_REG bit 18, SPI_USR: start the user command; the hardware clears it when done. */
const SPI_CMD_USR = 1 << 18;
const SPIFLASH_RDID = 0x9f;
/** JEDEC manufacturer and memory type of the emulated flash (GigaDevice GD25Q-series: C8 40). */
const JEDEC_MANUFACTURER = 0xc8;
const JEDEC_MEMORY_TYPE = 0x40;

export class Esp32s3Registers {
  private readonly values = new Map<number, number>();

  constructor(private readonly o: { efuses: Efuses; flashSizeBytes: number }) {
    this.values.set(CHIP_DETECT_MAGIC_REG, ESP32S3_MAGIC);
    this.flashCapacityCode = Math.round(Math.log2(o.flashSizeBytes));
  }

  /** JEDEC capacity byte: log2 of the size in bytes (0x17 for 8 MB). */
  private readonly flashCapacityCode: number;

  /** The chip's eFuses (GET_SECURITY_INFO reads them too). */
  get efuses(): Efuses {
    return this.o.efuses;
  }

  read(address: number): number {
    const a = address >>> 0;
    // The eFuse read registers are read-only: they always say what the fuses hold.
    if (a >= EFUSE_BASE && a < EFUSE_BASE + 0x1000) return this.o.efuses.registers().get(a) ?? 0;
    return this.values.get(a) ?? 0;
  }

  /** WRITE_REG: new = (old & ~mask) | (value & mask); a user command starts when SPI_USR is set. */
  write(address: number, value: number, mask: number): void {
    const a = address >>> 0;
    const next = ((this.read(a) & ~mask) | (value & mask)) >>> 0;
    this.values.set(a, next);
    if (a === SPI_CMD && next & SPI_CMD_USR) this.runFlashCommand();
  }

  private runFlashCommand(): void {
    const command = this.read(SPI_USR2) & 0xff;
    const answer = command === SPIFLASH_RDID ? JEDEC_MANUFACTURER | (JEDEC_MEMORY_TYPE << 8) | (this.flashCapacityCode << 16) : 0;
    this.values.set(SPI_W0, answer >>> 0);
    this.values.set(SPI_CMD, this.read(SPI_CMD) & ~SPI_CMD_USR);
  }
}
