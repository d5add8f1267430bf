// The registers a flashing tool reads and writes through READ_REG/WRITE_REG on an ESP32-S3
// (addresses from the ESP32-S3 TRM; esptool's and esptool-js's target files read the same ones):
//   - 0x40001000, the ROM word esptool calls CHIP_DETECT_MAGIC_REG (0x9 on the S3);
//   - the eFuse read registers (BLOCK0's fields, BLOCK1's MAC and chip revision, BLOCK2, the key
//     blocks, the Reed–Solomon error registers), from the chip's one eFuse model (efuse.ts);
//   - the eFuse controller's programming interface (EfuseController below; its registers and op
//     codes are the chip module's, firmware/chip/esp32s3-efuse.ts), which burns through that model,
//     as espefuse drives it;
//   - the SPI1 flash controller's user-command registers, enough to answer the JEDEC ID command
//     (RDID 0x9F) the way esptool's flash_id / detect_flash_size drive it.
// Any other address reads as last written, or 0.

import { EFUSE_RS_CHECK_BYTES, wordsToBytes } from '../../chip/efuse-rs.ts';
import {
  EFUSE_BASE,
  EFUSE_CLK,
  EFUSE_CMD,
  EFUSE_CONF,
  EFUSE_DAC_CONF,
  EFUSE_PGM_CHECK_VALUE0,
  EFUSE_PGM_CMD,
  EFUSE_PGM_DATA0,
  EFUSE_READ_CMD,
  EFUSE_READ_OP_CODE,
  EFUSE_STATUS,
  EFUSE_WRITE_OP_CODE,
  EFUSE_WR_TIM_CONF1,
  EFUSE_WR_TIM_CONF2,
} from '../../chip/esp32s3-efuse.ts';
import type { Efuses } from '../efuse.ts';

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

/** The controller's own registers: programming data, check values, configuration, command, timing. */
const CONTROLLER_REGISTERS = new Set([
  ...Array.from({ length: 11 }, (_, i) => EFUSE_PGM_DATA0 + 4 * i),
  EFUSE_CLK,
  EFUSE_CONF,
  EFUSE_STATUS,
  EFUSE_CMD,
  EFUSE_DAC_CONF,
  EFUSE_BASE + 0x1ec, // EFUSE_RD_TIM_CONF
  EFUSE_WR_TIM_CONF1,
  EFUSE_WR_TIM_CONF2,
]);

class EfuseController {
  private readonly values = new Map<number, number>();
  /** What the read registers held when the last program command ran, until a read command reloads them. */
  private stale: Map<number, number> | undefined;

  constructor(private readonly efuses: Efuses) {}

  owns(address: number): boolean {
    return CONTROLLER_REGISTERS.has(address);
  }

  read(address: number): number {
    if (this.owns(address)) return this.values.get(address) ?? 0;
    return (this.stale ?? this.efuses.registers()).get(address) ?? 0;
  }

  write(address: number, value: number): void {
    this.values.set(address, value >>> 0);
    if (address !== EFUSE_CMD) return;
    const opcode = (this.values.get(EFUSE_CONF) ?? 0) & 0xffff;
    if (value & EFUSE_PGM_CMD && opcode === EFUSE_WRITE_OP_CODE) this.program((value >>> 2) & 0xf);
    else if (value & EFUSE_READ_CMD && opcode === EFUSE_READ_OP_CODE) this.stale = undefined;
    // Done: the hardware clears the command bits (espefuse polls for that).
    this.values.set(EFUSE_CMD, value & ~(EFUSE_PGM_CMD | EFUSE_READ_CMD) & 0x3c);
  }

  private program(block: number): void {
    const data = Array.from({ length: 8 }, (_, i) => this.values.get(EFUSE_PGM_DATA0 + 4 * i) ?? 0);
    const check = wordsToBytes(Array.from({ length: 3 }, (_, i) => this.values.get(EFUSE_PGM_CHECK_VALUE0 + 4 * i) ?? 0)).subarray(0, EFUSE_RS_CHECK_BYTES);
    this.stale ??= this.efuses.registers();
    // Block numbers past BLOCK10 name no block: the chip burns nothing.
    if (block <= 10) this.efuses.programBlock(block, data, check);
    for (let i = 0; i < 11; i++) this.values.set(EFUSE_PGM_DATA0 + 4 * i, 0);
  }
}

export class Esp32s3Registers {
  private readonly values = new Map<number, number>();
  private readonly efuseController: EfuseController;

  constructor(private readonly o: { efuses: Efuses; flashSizeBytes: number }) {
    this.values.set(CHIP_DETECT_MAGIC_REG, ESP32S3_MAGIC);
    this.efuseController = new EfuseController(o.efuses);
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
    // The eFuse read registers are read-only: they say what the fuses hold (as of the last read command).
    if (a >= EFUSE_BASE && a < EFUSE_BASE + 0x1000) return this.efuseController.read(a);
    return this.values.get(a) ?? 0;
  }

  /** WRITE_REG: new = (old & ~mask) | (value & mask); a user command starts when SPI_USR is set. */
  write(address: number, value: number, mask: number): void {
    const a = address >>> 0;
    const next = ((this.read(a) & ~mask) | (value & mask)) >>> 0;
    if (a >= EFUSE_BASE && a < EFUSE_BASE + 0x1000) {
      // The read registers ignore writes; the controller's take them.
      if (this.efuseController.owns(a)) this.efuseController.write(a, next);
      return;
    }
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
