// The ESP32-S3's eFuses as the chip lays them out: where each block is read (EFUSE_RD_* registers),
// the BLOCK0 fields, which WR_DIS bit protects what, the key purposes, the Reed–Solomon error
// registers, the GET_SECURITY_INFO flags. One module of the chip's facts (as esptool keeps a chip in
// targets/esp32s3.py), read by the emulator's eFuse model (virtual-esp32/efuse.ts) and by the tools
// that burn and read real fuses (harness/flash/efuse-burn.ts, efuse-summary.ts) alike.
// Field positions are the ESP32-S3's (ESP-IDF components/efuse/esp32s3/esp_efuse_table.csv and
// esptool's espefuse/efuse_defs/esp32s3.yaml; the read registers from the ESP32-S3 TRM, eFuse
// chapter, and espefuse's esp32s3/mem_definition.py): BLOCK0 is read as EFUSE_RD_WR_DIS_REG (its
// word 0) and EFUSE_RD_REPEAT_DATA0..4_REG (words 1..5), BLOCK1 (MAC, chip revision) from
// EFUSE_RD_MAC_SPI_SYS_0_REG, BLOCK2 from EFUSE_RD_SYS_PART1_DATA0_REG, the key blocks BLOCK_KEY0..5
// (BLOCK4..9) from EFUSE_RD_KEY0_DATA0_REG on, 32 bytes each.

/** A field or value the chip's layout does not allow. */
export class EfuseError extends Error {
  override name = 'EfuseError';
}

export const EFUSE_BASE = 0x60007000;
/** BLOCK0 word n (word 0: WR_DIS; words 1..5: RD_REPEAT_DATA0..4). */
export const EFUSE_BLOCK0 = EFUSE_BASE + 0x2c;
/** BLOCK1 word 0: MAC bytes 2..5 (most significant first); word 1 low 16 bits: MAC bytes 0..1. */
export const EFUSE_BLOCK1 = EFUSE_BASE + 0x44;
export const EFUSE_BLOCK2 = EFUSE_BASE + 0x5c;
/** BLOCK_KEY0 (BLOCK4); BLOCK_KEYn at + n × 0x20. */
export const EFUSE_KEY0 = EFUSE_BASE + 0x9c;

/** Key purposes (esp_efuse_purpose_t / espefuse's names). */
export const KEY_PURPOSES = [
  'USER',
  'RESERVED',
  'XTS_AES_256_KEY_1',
  'XTS_AES_256_KEY_2',
  'XTS_AES_128_KEY',
  'HMAC_DOWN_ALL',
  'HMAC_DOWN_JTAG',
  'HMAC_DOWN_DIGITAL_SIGNATURE',
  'HMAC_UP',
  'SECURE_BOOT_DIGEST0',
  'SECURE_BOOT_DIGEST1',
  'SECURE_BOOT_DIGEST2',
] as const;
export type KeyPurpose = (typeof KEY_PURPOSES)[number];
export const KEY_BLOCKS = 6;
export const SECURE_BOOT_DIGEST_PURPOSES = ['SECURE_BOOT_DIGEST0', 'SECURE_BOOT_DIGEST1', 'SECURE_BOOT_DIGEST2'] as const;

/** Where a field lives in BLOCK0: its first bit (block-relative) and width (esp_efuse_table.csv). */
export const BLOCK0_FIELDS = {
  WR_DIS_RD_DIS: [0, 1],
  WR_DIS_KEY_PURPOSES: [8, 6],
  WR_DIS_SECURE_BOOT_EN: [15, 1],
  WR_DIS_KEYS: [23, 6],
  RD_DIS: [32, 7],
  SPI_BOOT_CRYPT_CNT: [82, 3],
  SECURE_BOOT_KEY_REVOKE0: [85, 1],
  SECURE_BOOT_KEY_REVOKE1: [86, 1],
  SECURE_BOOT_KEY_REVOKE2: [87, 1],
  KEY_PURPOSE_0: [88, 4],
  KEY_PURPOSE_1: [92, 4],
  KEY_PURPOSE_2: [96, 4],
  KEY_PURPOSE_3: [100, 4],
  KEY_PURPOSE_4: [104, 4],
  KEY_PURPOSE_5: [108, 4],
  SECURE_BOOT_EN: [116, 1],
  SECURE_BOOT_AGGRESSIVE_REVOKE: [117, 1],
  DIS_DOWNLOAD_MODE: [128, 1],
  ENABLE_SECURITY_DOWNLOAD: [133, 1],
  SECURE_VERSION: [142, 16],
} as const satisfies Record<string, readonly [number, number]>;
export type Block0Field = keyof typeof BLOCK0_FIELDS;

/**
 * Which WR_DIS bit (BLOCK0 word 0) write-protects which bits of BLOCK0: [first bit, width, WR_DIS
 * bit], from the `wr_dis` column of espefuse's efuse_defs/esp32s3.yaml (esptool) and ESP-IDF's
 * WR_DIS.* entries of esp_efuse_table.csv. WR_DIS itself and the reserved bits have none.
 */
export const BLOCK0_WRITE_PROTECTION: readonly (readonly [number, number, number])[] = [
  [32, 7, 0], // RD_DIS
  [39, 1, 1], // DIS_RTC_RAM_BOOT
  [40, 8, 2], // DIS_ICACHE … DIS_APP_CPU
  [48, 3, 31], // SOFT_DIS_JTAG
  [51, 2, 2], // DIS_PAD_JTAG, DIS_DOWNLOAD_MANUAL_ENCRYPT
  [53, 8, 30], // USB_DREFH … BTLC_GPIO_ENABLE
  [61, 21, 3], // VDD_SPI_* and WDT_DELAY_SEL
  [82, 3, 4], // SPI_BOOT_CRYPT_CNT
  [85, 1, 5], // SECURE_BOOT_KEY_REVOKE0
  [86, 1, 6], // SECURE_BOOT_KEY_REVOKE1
  [87, 1, 7], // SECURE_BOOT_KEY_REVOKE2
  [88, 4, 8], // KEY_PURPOSE_0 … 5: WR_DIS 8 … 13
  [92, 4, 9],
  [96, 4, 10],
  [100, 4, 11],
  [104, 4, 12],
  [108, 4, 13],
  [116, 1, 15], // SECURE_BOOT_EN
  [117, 1, 16], // SECURE_BOOT_AGGRESSIVE_REVOKE
  [118, 4, 2], // DIS_USB_JTAG, DIS_USB_SERIAL_JTAG, STRAP_JTAG_SEL, USB_PHY_SEL
  [122, 2, 17], // POWER_GLITCH_DSENSE
  [124, 34, 18], // FLASH_TPUW, DIS_DOWNLOAD_MODE … SECURE_VERSION (bits 124..157)
  [158, 1, 17], // POWERGLITCH_EN
  [159, 3, 19], // DIS_USB_OTG_DOWNLOAD_MODE, DISABLE_WAFER_VERSION_MAJOR, DISABLE_BLK_VERSION_MAJOR
];

/** The WR_DIS bit that write-protects a BLOCK0 field: the BLOCK0_WRITE_PROTECTION row holding its first bit. */
export function wrDisBitOf(field: Block0Field): number {
  const [start] = BLOCK0_FIELDS[field];
  const row = BLOCK0_WRITE_PROTECTION.find(([first, width]) => start >= first && start < first + width);
  if (!row) throw new EfuseError(`${field} has no WR_DIS bit`);
  return row[2];
}

/**
 * The eFuse blocks (espefuse esp32s3/mem_definition.py, EfuseDefineBlocks): words read, where the
 * read registers start, the WR_DIS bit of the whole block and the RD_DIS bit (BLOCK0 word 1) that
 * hides it. BLOCK0 is protected field by field (BLOCK0_WRITE_PROTECTION) and has no check bytes;
 * blocks 1 to 10 carry 12 Reed–Solomon check bytes (efuse-rs.ts).
 */
export const EFUSE_BLOCKS: readonly { name: string; words: number; read: number; wrDis?: number; rdDis?: number }[] = [
  { name: 'BLOCK0', words: 6, read: EFUSE_BLOCK0 },
  { name: 'BLOCK1', words: 6, read: EFUSE_BLOCK1, wrDis: 20 },
  { name: 'BLOCK2', words: 8, read: EFUSE_BLOCK2, wrDis: 21 },
  { name: 'BLOCK3', words: 8, read: EFUSE_BASE + 0x7c, wrDis: 22 },
  ...Array.from({ length: KEY_BLOCKS }, (_, k) => ({ name: `BLOCK_KEY${k}`, words: 8, read: EFUSE_KEY0 + 0x20 * k, wrDis: 23 + k, rdDis: k })),
  { name: 'BLOCK10', words: 8, read: EFUSE_BASE + 0x15c, wrDis: 29, rdDis: 6 },
];

/**
 * EFUSE_RD_RS_ERR0/1_REG: per block 1 to 10, the number of bytes the Reed–Solomon decoder corrected
 * (3 bits) and a fail bit (the block could not be decoded) — [register, first bit] of each
 * (mem_definition.py, BLOCK_ERRORS). EFUSE_RD_REPEAT_ERR0..4 (BLOCK0's backup copies) read 0.
 */
export const EFUSE_RD_REPEAT_ERR0 = EFUSE_BASE + 0x17c;
export const EFUSE_RD_RS_ERR0 = EFUSE_BASE + 0x1c0;
export const EFUSE_RD_RS_ERR1 = EFUSE_BASE + 0x1c4;
export const RS_ERROR_FIELDS: readonly (readonly [number, number])[] = [
  [EFUSE_RD_RS_ERR0, 0], // BLOCK1
  [EFUSE_RD_RS_ERR0, 4],
  [EFUSE_RD_RS_ERR0, 8],
  [EFUSE_RD_RS_ERR0, 12], // BLOCK_KEY0 … KEY4: 12 … 28
  [EFUSE_RD_RS_ERR0, 16],
  [EFUSE_RD_RS_ERR0, 20],
  [EFUSE_RD_RS_ERR0, 24],
  [EFUSE_RD_RS_ERR0, 28],
  [EFUSE_RD_RS_ERR1, 0], // BLOCK_KEY5
  [EFUSE_RD_RS_ERR1, 4], // BLOCK10
];

/** BLOCK0 as six 32-bit words. */
export function getField(words: readonly number[], field: Block0Field): number {
  const [start, width] = BLOCK0_FIELDS[field];
  let value = 0;
  for (let i = width - 1; i >= 0; i--) {
    const bit = start + i;
    value = value * 2 + (((words[bit >>> 5] ?? 0) >>> (bit & 31)) & 1);
  }
  return value;
}

/** Sets a field's bits in `words` (ORs: a caller builds the bits to burn in zeroed words). */
export function orField(words: number[], field: Block0Field, value: number): void {
  const [start, width] = BLOCK0_FIELDS[field];
  if (!Number.isInteger(value) || value < 0 || value >= 2 ** width) throw new EfuseError(`${field} is ${width} bits: ${value} does not fit`);
  for (let i = 0; i < width; i++) {
    const bit = start + i;
    if (Math.floor(value / 2 ** i) & 1) words[bit >>> 5] = (words[bit >>> 5]! | (1 << (bit & 31))) >>> 0;
  }
}

/** The BLOCK0 bits the chip still programs, given its WR_DIS word: a 0 where a WR_DIS bit protects. */
export function block0WritableMask(wrDis: number): number[] {
  const mask = [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff];
  for (const [start, width, protectedBy] of BLOCK0_WRITE_PROTECTION) {
    if (!((wrDis >>> protectedBy) & 1)) continue;
    for (let bit = start; bit < start + width; bit++) mask[bit >>> 5] = (mask[bit >>> 5]! & ~(1 << (bit & 31))) >>> 0;
  }
  return mask;
}

/**
 * The GET_SECURITY_INFO flags word: the ROM's bits, the same on every target (esptool's
 * SECURITY_INFO_FLAG_MAP). Flash encryption is not a flag: it is the SPI_BOOT_CRYPT_CNT byte.
 */
export const SECURITY_FLAGS = {
  SECURE_BOOT_EN: 1 << 0,
  SECURE_BOOT_AGGRESSIVE_REVOKE: 1 << 1,
  SECURE_DOWNLOAD_ENABLE: 1 << 2,
  SECURE_BOOT_KEY_REVOKE0: 1 << 3,
  SECURE_BOOT_KEY_REVOKE1: 1 << 4,
  SECURE_BOOT_KEY_REVOKE2: 1 << 5,
} as const;

/** The chip revision, as WAFER_VERSION_MAJOR and WAFER_VERSION_MINOR say it (v0.2: major 0, minor 2). */
export interface ChipRevision {
  major: number;
  minor: number;
}

/**
 * BLOCK1's six words as the factory burns them. Word 0: MAC bytes 2..5 (most significant first);
 * word 1 low 16 bits: MAC bytes 0..1. Word 3: WAFER_VERSION_MINOR_LO [20:18], PKG_VERSION [23:21]
 * (0: QFN56), BLK_VERSION_MINOR [26:24] (1), FLASH_CAP [29:27] (0: a module's external flash).
 * Word 5: WAFER_VERSION_MINOR_HI [23], WAFER_VERSION_MAJOR [25:24].
 */
export function block1Words(mac: ArrayLike<number>, revision: ChipRevision): number[] {
  return [((mac[2]! << 24) | (mac[3]! << 16) | (mac[4]! << 8) | mac[5]!) >>> 0, (mac[0]! << 8) | mac[1]!, 0, (((revision.minor & 7) << 18) | (1 << 24)) >>> 0, 0, ((((revision.minor >> 3) & 1) << 23) | ((revision.major & 3) << 24)) >>> 0];
}

/** The factory base MAC (the Wi-Fi station's) from BLOCK1's words (block1Words). */
export function block1Mac(words: readonly number[]): Uint8Array {
  const w0 = words[0] ?? 0;
  const w1 = words[1] ?? 0;
  return Uint8Array.from([(w1 >>> 8) & 0xff, w1 & 0xff, w0 >>> 24, (w0 >>> 16) & 0xff, (w0 >>> 8) & 0xff, w0 & 0xff]);
}

/** WAFER_VERSION_MAJOR and MINOR from BLOCK1's words (block1Words). */
export function block1Revision(words: readonly number[]): ChipRevision {
  const w3 = words[3] ?? 0;
  const w5 = words[5] ?? 0;
  return { major: (w5 >>> 24) & 3, minor: (((w5 >>> 23) & 1) << 3) | ((w3 >>> 18) & 7) };
}

/** How many bits are set: SECURE_VERSION and SPI_BOOT_CRYPT_CNT count burned bits, not a binary number. */
export function popcount(n: number): number {
  let c = 0;
  for (let v = n; v > 0; v >>>= 1) c += v & 1;
  return c;
}

/**
 * The ESP32-S3 eFuse controller's programming interface, as espefuse's esp32s3 driver drives it
 * (esptool: espefuse/efuse/esp32s3/mem_definition.py for the addresses and opcodes, fields.py
 * `efuse_program`/`efuse_read`/`clear_pgm_registers`; ESP-IDF: components/soc/esp32s3/register/
 * soc/efuse_reg.h): the data to burn goes to EFUSE_PGM_DATA0..7 and, for blocks 1 to 10, its
 * Reed–Solomon check bytes to EFUSE_PGM_CHECK_VALUE0..2; EFUSE_CONF takes the write opcode 0x5A5A,
 * then EFUSE_CMD the program command PGM_CMD (bit 1) with the block number in bits [5:2]; the
 * hardware burns the block and clears the command bit, and clears the PGM registers (as espefuse's
 * emulator does); EFUSE_CONF 0x5AA5 with READ_CMD (bit 0) reloads the read registers. Until that
 * read, READ_REG answers what the read registers held before the program command, as on the chip.
 * A command given without its opcode in EFUSE_CONF does nothing (the bit still clears). The timing
 * registers (EFUSE_DAC_CONF, EFUSE_WR_TIM_CONF1/2) hold what is written; burning does not depend
 * on them here.
 */
export const EFUSE_PGM_DATA0 = EFUSE_BASE + 0x000;
export const EFUSE_PGM_CHECK_VALUE0 = EFUSE_BASE + 0x020;
export const EFUSE_CLK = EFUSE_BASE + 0x1c8;
export const EFUSE_CONF = EFUSE_BASE + 0x1cc;
export const EFUSE_STATUS = EFUSE_BASE + 0x1d0;
export const EFUSE_CMD = EFUSE_BASE + 0x1d4;
export const EFUSE_DAC_CONF = EFUSE_BASE + 0x1e8;
export const EFUSE_WR_TIM_CONF1 = EFUSE_BASE + 0x1f4;
export const EFUSE_WR_TIM_CONF2 = EFUSE_BASE + 0x1f8;
export const EFUSE_WRITE_OP_CODE = 0x5a5a;
export const EFUSE_READ_OP_CODE = 0x5aa5;
export const EFUSE_READ_CMD = 1 << 0;
export const EFUSE_PGM_CMD = 1 << 1;
