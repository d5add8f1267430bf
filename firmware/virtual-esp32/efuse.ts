// A virtual ESP32-S3's eFuses: one model per chip, which everything that asks the chip about its
// fuses reads (docs/efuse-model.md): the ROM loader's READ_REG (rom/registers.ts) and
// GET_SECURITY_INFO (rom/loader.ts), the firmware's HMAC (chip.ts fuseHmac, with the key block the
// manifest names) and so `fleet efuse summary`, which reads the ROM as espefuse does.
// Field positions are the ESP32-S3's (ESP-IDF components/efuse/esp32s3/esp_efuse_table.csv and
// esptool's espefuse/efuse_defs/esp32s3.yaml; the read registers from the ESP32-S3 TRM, eFuse
// chapter, and espefuse's esp32s3/mem_definition.py): BLOCK0 is read as EFUSE_RD_WR_DIS_REG (its
// word 0) and EFUSE_RD_REPEAT_DATA0..4_REG (words 1..5), BLOCK1 (MAC, chip revision) from
// EFUSE_RD_MAC_SPI_SYS_0_REG, BLOCK2 from EFUSE_RD_SYS_PART1_DATA0_REG, the key blocks BLOCK_KEY0..5
// (BLOCK4..9) from EFUSE_RD_KEY0_DATA0_REG on, 32 bytes each. A read-protected key block reads as
// zeros, as on the chip; only the HMAC peripheral uses it. Burning goes through `programBlock`, what
// the eFuse controller's program command does (rom/registers.ts drives it as espefuse does).
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { equalBytes, hex, putU32 } from '../image/bytes.ts';
import type { TrustedKey } from '../image/secure-boot.ts';
import { bytesToWords, EFUSE_RS_CHECK_BYTES, efuseRsCheck, wordsToBytes } from './efuse-rs.ts';

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

export class EfuseError extends Error {
  override name = 'EfuseError';
}

export interface KeyBlock {
  purpose: KeyPurpose;
  readProtected: boolean;
  /** The key block write-protected (WR_DIS.KEYn); espefuse burn_key protects it and its purpose. */
  writeProtected: boolean;
  /** Its KEY_PURPOSE_n field write-protected (WR_DIS.KEYn_PURPOSE). */
  purposeWriteProtected: boolean;
  /** 32 bytes as burned; all zero when nothing is burned. */
  key: Buffer;
}

export interface EfuseSpec {
  /** The factory base MAC (BLOCK1): the Wi-Fi station MAC. */
  macAddress: string;
  /** The device key burned with purpose HMAC_UP, read-protected, in BLOCK_KEY<hmacKeyBlock>. */
  hmacKey: Buffer;
  hmacKeyBlock: number;
  /** The chip revision (WAFER_VERSION_MAJOR/MINOR); default v0.2. */
  revision?: { major: number; minor: number };
  secureVersion?: number;
}

/** What programming one block did (EFUSE_CMD PGM_CMD). */
export interface ProgramResult {
  block: number;
  /** False when the block is write-protected as a whole (nothing changed, as the chip ignores it). */
  written: boolean;
}

/**
 * The chip's eFuses as burned: each block's words (BLOCK0 six, BLOCK1 six, the others eight) and,
 * for blocks 1 to 10, the check bytes burned with them. Every burn ORs bits in, through
 * `programBlock` (the eFuse controller's PGM_CMD, rom/registers.ts) or the one-way burns below,
 * so a bit once 1 stays 1; what the fields say (purposes, protection, secure boot, SECURE_VERSION)
 * is read from those bits, so every reader sees the same thing.
 */
export class Efuses {
  private readonly blocks: number[][];
  private readonly checks: Uint8Array[];

  constructor(spec: EfuseSpec) {
    const mac = spec.macAddress.split(':').map((h) => (/^[0-9a-fA-F]{2}$/.test(h) ? parseInt(h, 16) : NaN));
    if (mac.length !== 6 || mac.some((b) => Number.isNaN(b))) throw new EfuseError(`not a MAC address: ${spec.macAddress}`);
    if (!Number.isInteger(spec.hmacKeyBlock) || spec.hmacKeyBlock < 0 || spec.hmacKeyBlock >= KEY_BLOCKS) throw new EfuseError(`the HMAC key block must be BLOCK_KEY0 to BLOCK_KEY5, not ${spec.hmacKeyBlock}`);
    if (spec.hmacKey.length !== 32) throw new EfuseError(`an eFuse key block holds 32 bytes, not ${spec.hmacKey.length}`);
    this.blocks = EFUSE_BLOCKS.map((b) => new Array<number>(b.words).fill(0));
    this.checks = EFUSE_BLOCKS.map(() => new Uint8Array(EFUSE_RS_CHECK_BYTES));
    const revision = spec.revision ?? { major: 0, minor: 2 };
    // BLOCK1 as the factory burns it. Word 0: MAC bytes 2..5 (most significant first); word 1 low 16
    // bits: MAC bytes 0..1. Word 3: WAFER_VERSION_MINOR_LO [20:18], PKG_VERSION [23:21] (0: QFN56),
    // BLK_VERSION_MINOR [26:24] (1), FLASH_CAP [29:27] (0: a module's external flash). Word 5:
    // WAFER_VERSION_MINOR_HI [23], WAFER_VERSION_MAJOR [25:24].
    const block1 = [((mac[2]! << 24) | (mac[3]! << 16) | (mac[4]! << 8) | mac[5]!) >>> 0, (mac[0]! << 8) | mac[1]!, 0, (((revision.minor & 7) << 18) | (1 << 24)) >>> 0, 0, ((((revision.minor >> 3) & 1) << 23) | ((revision.major & 3) << 24)) >>> 0];
    this.burnCoded(1, block1);
    // BLOCK2 word 4: BLK_VERSION_MAJOR [1:0] (1).
    this.burnCoded(2, [0, 0, 0, 0, 1, 0, 0, 0]);
    this.burnKeyBlock(spec.hmacKeyBlock, 'HMAC_UP', spec.hmacKey, true);
    if (spec.secureVersion) this.burnSecureVersion(spec.secureVersion);
  }

  /** The factory base MAC (BLOCK1). */
  get mac(): Uint8Array {
    const [w0, w1] = this.blocks[1]!;
    return Uint8Array.from([(w1! >>> 8) & 0xff, w1! & 0xff, w0! >>> 24, (w0! >>> 16) & 0xff, (w0! >>> 8) & 0xff, w0! & 0xff]);
  }

  /** WAFER_VERSION_MAJOR and MINOR (BLOCK1). */
  get revision(): { major: number; minor: number } {
    const b1 = this.blocks[1]!;
    return { major: (b1[5]! >>> 24) & 3, minor: (((b1[5]! >>> 23) & 1) << 3) | ((b1[3]! >>> 18) & 7) };
  }

  private field(name: Block0Field): number {
    return getField(this.blocks[0]!, name);
  }

  get secureBootEnabled(): boolean {
    return this.field('SECURE_BOOT_EN') === 1;
  }

  get secureBootKeyRevoked(): readonly boolean[] {
    return [0, 1, 2].map((i) => this.field(`SECURE_BOOT_KEY_REVOKE${i}` as Block0Field) === 1);
  }

  get spiBootCryptCnt(): number {
    return this.field('SPI_BOOT_CRYPT_CNT');
  }

  /** SECURE_VERSION: the anti-rollback counter, the number of its bits burned (as esp_efuse_read_secure_version counts). */
  get secureVersion(): number {
    return popcount(this.field('SECURE_VERSION'));
  }

  /** Raises the counter (burnSecureVersion): fuses are never lowered. */
  set secureVersion(version: number) {
    this.burnSecureVersion(version);
  }

  get downloadModeDisabled(): boolean {
    return this.field('DIS_DOWNLOAD_MODE') === 1;
  }

  get securityDownloadEnabled(): boolean {
    return this.field('ENABLE_SECURITY_DOWNLOAD') === 1;
  }

  /** BLOCK_KEYn with its purpose and protection, as BLOCK0 says. */
  keyBlock(block: number): KeyBlock {
    if (!Number.isInteger(block) || block < 0 || block >= KEY_BLOCKS) throw new EfuseError(`no key block BLOCK_KEY${block}: the ESP32-S3 has BLOCK_KEY0 to BLOCK_KEY5`);
    const wrDis = this.blocks[0]![0]!;
    return {
      purpose: KEY_PURPOSES[this.field(`KEY_PURPOSE_${block}` as Block0Field)] ?? 'RESERVED',
      readProtected: ((this.field('RD_DIS') >>> block) & 1) === 1,
      writeProtected: ((wrDis >>> (23 + block)) & 1) === 1,
      purposeWriteProtected: ((wrDis >>> (8 + block)) & 1) === 1,
      key: Buffer.from(wordsToBytes(this.blocks[4 + block]!)),
    };
  }

  /** The six key blocks (copies: change them by burning). */
  get keys(): KeyBlock[] {
    return Array.from({ length: KEY_BLOCKS }, (_, k) => this.keyBlock(k));
  }

  /**
   * esp_hmac_calculate(HMAC_KEY<block>, message) in upstream mode: HMAC-SHA256 with the key block,
   * which must have purpose HMAC_UP (the peripheral refuses any other).
   */
  hmac(block: number, message: Uint8Array): Buffer {
    const k = this.keyBlock(block);
    if (k.purpose !== 'HMAC_UP') throw new EfuseError(`eFuse HMAC failed: BLOCK_KEY${block} has purpose ${k.purpose}, not HMAC_UP`);
    return createHmac('sha256', k.key).update(message).digest();
  }

  /**
   * EFUSE_CMD PGM_CMD for `block` with EFUSE_PGM_DATA0..7 = `data` and EFUSE_PGM_CHECK_VALUE0..2 =
   * `check` (12 bytes, the Reed–Solomon check of blocks 1 to 10; BLOCK0 has none). The bits are ORed
   * into the block, never cleared. A block write-protected as a whole, or the BLOCK0 fields whose
   * WR_DIS bit is burned, are left as they are, as the chip silently ignores them (espefuse finds
   * out on reading back). Check bytes that do not fit the data are burned as given: that block then
   * reads as failed (EFUSE_RD_RS_ERR), as the chip's decoder reports it.
   */
  programBlock(block: number, data: readonly number[], check: Uint8Array = new Uint8Array(EFUSE_RS_CHECK_BYTES)): ProgramResult {
    const def = EFUSE_BLOCKS[block];
    if (!def) throw new EfuseError(`no eFuse block ${block}: the ESP32-S3 has BLOCK0 to BLOCK10`);
    const words = this.blocks[block]!;
    if (block === 0) {
      const mask = block0WritableMask(words[0]!);
      for (let i = 0; i < words.length; i++) words[i] = (words[i]! | ((data[i] ?? 0) & mask[i]!)) >>> 0;
      return { block, written: true };
    }
    if ((this.blocks[0]![0]! >>> def.wrDis!) & 1) return { block, written: false };
    for (let i = 0; i < words.length; i++) words[i] = (words[i]! | (data[i] ?? 0)) >>> 0;
    const burned = this.checks[block]!;
    for (let i = 0; i < EFUSE_RS_CHECK_BYTES; i++) burned[i]! |= check[i] ?? 0;
    return { block, written: true };
  }

  /** Whether block 1..10's burned check bytes fit its data (the decoder's fail bit is set when not). */
  codingFailed(block: number): boolean {
    if (block < 1 || block >= EFUSE_BLOCKS.length) return false;
    const data = wordsToBytes([...this.blocks[block]!, 0, 0].slice(0, 8));
    return !equalBytes(efuseRsCheck(data), this.checks[block]!);
  }

  /** Burns data with its check bytes, as espefuse does for blocks 1 to 10. */
  private burnCoded(block: number, words: readonly number[]): void {
    this.programBlock(block, words, efuseRsCheck(wordsToBytes([...words, 0, 0].slice(0, 8))));
  }

  private burnKeyBlock(block: number, purpose: KeyPurpose, key: Uint8Array, readProtect: boolean): void {
    this.burnCoded(4 + block, bytesToWords(key));
    const w = [0, 0, 0, 0, 0, 0];
    orField(w, `KEY_PURPOSE_${block}` as Block0Field, KEY_PURPOSES.indexOf(purpose));
    orField(w, 'WR_DIS_KEY_PURPOSES', 1 << block);
    orField(w, 'WR_DIS_KEYS', 1 << block);
    if (readProtect) orField(w, 'RD_DIS', 1 << block);
    this.programBlock(0, w);
  }

  /** Burns BLOCK0 bits, refusing (nothing burned) when a WR_DIS bit protects any of them. */
  private burnBlock0(what: string, bits: readonly number[]): void {
    const mask = block0WritableMask(this.blocks[0]![0]!);
    if (bits.some((b, i) => (b & ~mask[i]!) !== 0)) throw new EfuseError(`${what} is write-protected (its WR_DIS bit is burned): it cannot be burned`);
    this.programBlock(0, bits);
  }

  // One-way burns (espefuse burn-key, burn-key-digest, burn-efuse): a bit, once 1, stays 1, so every
  // burn that would clear a bit or rewrite a written block is refused with why, and nothing changes.

  /**
   * Burns a key block with its purpose (`espefuse burn-key BLOCK_KEYn key.bin PURPOSE`; for
   * SECURE_BOOT_DIGESTn, `burn-key-digest`). The block and its purpose are write-protected after, as
   * espefuse does; keys other than digests are read-protected unless `readable`.
   */
  burnKey(block: number, purpose: KeyPurpose, key: Uint8Array, o: { readable?: boolean } = {}): void {
    const k = this.keyBlock(block);
    if (!KEY_PURPOSES.includes(purpose) || purpose === 'RESERVED' || purpose === 'USER') throw new EfuseError(`${purpose} is not a key purpose one burns a key for`);
    if (key.length !== 32) throw new EfuseError(`an eFuse key block holds 32 bytes, not ${key.length}`);
    if (k.writeProtected || k.purposeWriteProtected || k.readProtected || k.purpose !== 'USER' || k.key.some((b) => b !== 0)) {
      throw new EfuseError(`BLOCK_KEY${block} is already burned (purpose ${k.purpose}): eFuses cannot be written twice`);
    }
    const digestSlot = SECURE_BOOT_DIGEST_PURPOSES.indexOf(purpose as (typeof SECURE_BOOT_DIGEST_PURPOSES)[number]);
    if (digestSlot >= 0) {
      const other = this.keys.findIndex((x) => x.purpose === purpose);
      if (other >= 0) throw new EfuseError(`${purpose} is already burned in BLOCK_KEY${other}`);
    }
    this.burnKeyBlock(block, purpose, key, digestSlot < 0 && !o.readable);
  }

  /** SECURE_BOOT_EN: from the next reset the ROM and the bootloader boot only signed images. */
  enableSecureBoot(): void {
    const w = [0, 0, 0, 0, 0, 0];
    orField(w, 'SECURE_BOOT_EN', 1);
    this.burnBlock0('SECURE_BOOT_EN', w);
  }

  /** SECURE_BOOT_KEY_REVOKEn: the key in digest slot n is never trusted again. */
  revokeSecureBootKey(slot: number): void {
    if (!Number.isInteger(slot) || slot < 0 || slot > 2) throw new EfuseError(`secure boot key slots are 0 to 2, not ${slot}`);
    const w = [0, 0, 0, 0, 0, 0];
    orField(w, `SECURE_BOOT_KEY_REVOKE${slot}` as Block0Field, 1);
    this.burnBlock0(`SECURE_BOOT_KEY_REVOKE${slot}`, w);
  }

  /** Raises SECURE_VERSION to `version` (burns bits); asking for less than it holds is refused. */
  burnSecureVersion(version: number): void {
    const [, width] = BLOCK0_FIELDS.SECURE_VERSION;
    if (!Number.isInteger(version) || version < 0 || version > width) throw new EfuseError(`SECURE_VERSION counts 0 to ${width}, not ${version}`);
    if (version < this.secureVersion) throw new EfuseError(`SECURE_VERSION is ${this.secureVersion}: eFuse bits cannot be cleared to make it ${version}`);
    // A thermometer code, as esp_efuse_update_secure_version burns it: version n is bits 0..n-1.
    const w = [0, 0, 0, 0, 0, 0];
    orField(w, 'SECURE_VERSION', 2 ** version - 1);
    this.burnBlock0('SECURE_VERSION', w);
  }

  /** The secure boot keys the chip trusts: each SECURE_BOOT_DIGESTn block, with its revocation bit. */
  secureBootKeys(): TrustedKey[] {
    const out: TrustedKey[] = [];
    const revoked = this.secureBootKeyRevoked;
    this.keys.forEach((k) => {
      const slot = SECURE_BOOT_DIGEST_PURPOSES.indexOf(k.purpose as (typeof SECURE_BOOT_DIGEST_PURPOSES)[number]);
      if (slot >= 0) out.push({ digest: hex(k.key), slot, revoked: revoked[slot]! });
    });
    return out.sort((a, b) => a.slot! - b.slot!);
  }

  /** BLOCK0 as the chip reads it (six words). */
  block0(): number[] {
    return [...this.blocks[0]!];
  }

  /** Every eFuse read register the model defines, by address (what READ_REG answers). */
  registers(): Map<number, number> {
    const r = new Map<number, number>();
    const rdDis = this.field('RD_DIS');
    EFUSE_BLOCKS.forEach((def, b) => {
      // A read-protected block reads as zeros, as on the chip; only the peripherals use it.
      const hidden = def.rdDis !== undefined && ((rdDis >>> def.rdDis) & 1) === 1;
      this.blocks[b]!.forEach((word, i) => r.set(def.read + 4 * i, hidden ? 0 : word));
    });
    for (let i = 0; i < 5; i++) r.set(EFUSE_RD_REPEAT_ERR0 + 4 * i, 0);
    r.set(EFUSE_RD_RS_ERR0, 0);
    r.set(EFUSE_RD_RS_ERR1, 0);
    RS_ERROR_FIELDS.forEach(([reg, at], i) => {
      if (this.codingFailed(i + 1)) r.set(reg, (r.get(reg)! | (1 << (at + 3))) >>> 0);
    });
    return r;
  }

  /**
   * GET_SECURITY_INFO's 20 bytes (ESP32-S3): flags u32, flash_crypt_cnt u8, key_purposes[7] (the six
   * key blocks' purposes and a seventh, 0, for the unused slot), chip_id u32, api_version u32 (0).
   */
  securityInfo(chipId: number): Uint8Array {
    const out = new Uint8Array(20);
    let flags = 0;
    if (this.secureBootEnabled) flags |= SECURITY_FLAGS.SECURE_BOOT_EN;
    if (this.field('SECURE_BOOT_AGGRESSIVE_REVOKE')) flags |= SECURITY_FLAGS.SECURE_BOOT_AGGRESSIVE_REVOKE;
    if (this.securityDownloadEnabled) flags |= SECURITY_FLAGS.SECURE_DOWNLOAD_ENABLE;
    this.secureBootKeyRevoked.forEach((r, i) => {
      if (r) flags |= SECURITY_FLAGS.SECURE_BOOT_KEY_REVOKE0 << i;
    });
    putU32(out, 0, flags);
    out[4] = this.spiBootCryptCnt;
    for (let k = 0; k < KEY_BLOCKS; k++) out[5 + k] = this.field(`KEY_PURPOSE_${k}` as Block0Field);
    putU32(out, 12, chipId);
    putU32(out, 16, 0);
    return out;
  }
}

/** How many bits are set: SECURE_VERSION and SPI_BOOT_CRYPT_CNT count burned bits, not a binary number. */
export function popcount(n: number): number {
  let c = 0;
  for (let v = n; v > 0; v >>>= 1) c += v & 1;
  return c;
}

/** The product manifest's `defines.fuse.hmac_key`: the key block the firmware's fw_fuse.c computes its HMAC with. */
export function manifestHmacKeyBlock(manifestPath = new URL('../src/platform/moddable/manifest.json', import.meta.url)): number {
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { defines?: { fuse?: { hmac_key?: unknown } } };
  const block = manifest.defines?.fuse?.hmac_key;
  if (typeof block !== 'number' || !Number.isInteger(block) || block < 0 || block >= KEY_BLOCKS) throw new EfuseError(`the manifest's defines.fuse.hmac_key must be 0 to 5, not ${JSON.stringify(block)}`);
  return block;
}
