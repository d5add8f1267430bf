// The registers a flashing tool reads and writes through READ_REG/WRITE_REG on an ESP32-S3
// (addresses from the ESP32-S3 TRM; esptool's and esptool-js's target files read the same ones):
//   - 0x40001000, the ROM word esptool calls CHIP_DETECT_MAGIC_REG (0x9 on the S3);
//   - eFuse BLOCK1 (MAC, package, chip revision, flash/PSRAM capability) and BLOCK2 (block version),
//     here derived from the board's identity: its base MAC is its Wi-Fi station MAC;
//   - the SPI1 flash controller's user-command registers, enough to answer the JEDEC ID command
//     (RDID 0x9F) the way esptool's flash_id / detect_flash_size drive it.
// Any other address reads as last written, or 0.

const CHIP_DETECT_MAGIC_REG = 0x40001000;
const ESP32S3_MAGIC = 0x9;

const EFUSE_BASE = 0x60007000;
/** BLOCK1 word 0: MAC bytes 2..5, most significant first. */
const EFUSE_MAC0 = EFUSE_BASE + 0x44;
/** BLOCK1 word 1, low 16 bits: MAC bytes 0..1. */
const EFUSE_MAC1 = EFUSE_BASE + 0x48;
/** BLOCK1 word 3: WAFER_VERSION_MINOR_LO [20:18], PKG_VERSION [23:21], BLK_VERSION_MINOR [26:24], FLASH_CAP [29:27]. */
const EFUSE_BLOCK1_W3 = EFUSE_BASE + 0x50;
/** BLOCK2 word 4: BLK_VERSION_MAJOR [1:0]. */
const EFUSE_BLOCK2_W4 = EFUSE_BASE + 0x5c + 0x10;

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

  constructor(o: { macAddress: string; flashSizeBytes: number }) {
    const mac = o.macAddress.split(':').map((h) => parseInt(h, 16));
    if (mac.length !== 6 || mac.some((b) => !(b >= 0 && b <= 255))) throw new RangeError(`not a MAC address: ${o.macAddress}`);
    this.values.set(CHIP_DETECT_MAGIC_REG, ESP32S3_MAGIC);
    this.values.set(EFUSE_MAC0, ((mac[2]! << 24) | (mac[3]! << 16) | (mac[4]! << 8) | mac[5]!) >>> 0);
    this.values.set(EFUSE_MAC1, (mac[0]! << 8) | mac[1]!);
    // Chip v0.2 in a QFN56 package, block version v1.1, no in-package flash or PSRAM (a module's external flash).
    this.values.set(EFUSE_BLOCK1_W3, (2 << 18) | (0 << 21) | (1 << 24) | (0 << 27));
    this.values.set(EFUSE_BLOCK2_W4, 1);
    this.flashCapacityCode = Math.round(Math.log2(o.flashSizeBytes));
  }

  /** JEDEC capacity byte: log2 of the size in bytes (0x17 for 8 MB). */
  private readonly flashCapacityCode: number;

  read(address: number): number {
    return this.values.get(address >>> 0) ?? 0;
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
