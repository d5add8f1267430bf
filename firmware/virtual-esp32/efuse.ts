// A virtual ESP32-S3's eFuses: one model per chip, which everything that asks the chip about its
// fuses reads (docs/efuse-model.md): the ROM loader's READ_REG (rom/registers.ts) and
// GET_SECURITY_INFO (rom/loader.ts), the firmware's HMAC (chip.ts fuseHmac, with the key block the
// manifest names) and so `fleet efuse summary`, which reads the ROM as espefuse does.
// Field positions are the ESP32-S3's (ESP-IDF components/efuse/esp32s3/esp_efuse_table.csv; the
// read registers from the ESP32-S3 TRM, eFuse chapter): BLOCK0 is read as EFUSE_RD_WR_DIS_REG
// (its word 0) and EFUSE_RD_REPEAT_DATA0..4_REG (words 1..5), BLOCK1 (MAC, chip revision) from
// EFUSE_RD_MAC_SPI_SYS_0_REG, BLOCK2 from EFUSE_RD_SYS_PART1_DATA0_REG, the key blocks BLOCK_KEY0..5
// (BLOCK4..9) from EFUSE_RD_KEY0_DATA0_REG on, 32 bytes each. A read-protected key block reads as
// zeros, as on the chip; only the HMAC peripheral uses it.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hex, putU32 } from '../image/bytes.ts';
import type { TrustedKey } from '../image/secure-boot.ts';

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
  DIS_DOWNLOAD_MODE: [128, 1],
  ENABLE_SECURITY_DOWNLOAD: [132, 1],
  SECURE_VERSION: [148, 16],
} as const satisfies Record<string, readonly [number, number]>;
export type Block0Field = keyof typeof BLOCK0_FIELDS;

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

function setField(words: number[], field: Block0Field, value: number): void {
  const [start, width] = BLOCK0_FIELDS[field];
  if (!Number.isInteger(value) || value < 0 || value >= 2 ** width) throw new EfuseError(`${field} is ${width} bits: ${value} does not fit`);
  for (let i = 0; i < width; i++) {
    const bit = start + i;
    const mask = 1 << (bit & 31);
    words[bit >>> 5] = ((Math.floor(value / 2 ** i) & 1 ? words[bit >>> 5]! | mask : words[bit >>> 5]! & ~mask) >>> 0);
  }
}

/** The GET_SECURITY_INFO flags word (esptool's names): bit 0 secure boot, bit 2 flash encryption, bit 1 secure download. */
export const SECURITY_FLAGS = { SECURE_BOOT_EN: 1 << 0, SECURE_DOWNLOAD_ENABLE: 1 << 1, FLASH_CRYPT_CNT: 1 << 2 } as const;

export class EfuseError extends Error {
  override name = 'EfuseError';
}

export interface KeyBlock {
  purpose: KeyPurpose;
  readProtected: boolean;
  /** The key block and its purpose write-protected (espefuse burn_key does both). */
  writeProtected: boolean;
  /** 32 bytes; all zero when nothing is burned. */
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

export class Efuses {
  readonly mac: Uint8Array;
  readonly keys: KeyBlock[];
  readonly revision: { major: number; minor: number };
  secureBootEnabled = false;
  readonly secureBootKeyRevoked = [false, false, false];
  spiBootCryptCnt = 0;
  /** SECURE_VERSION: the anti-rollback counter (each burned bit counts one). */
  secureVersion: number;
  downloadModeDisabled = false;
  securityDownloadEnabled = false;

  constructor(spec: EfuseSpec) {
    const mac = spec.macAddress.split(':').map((h) => (/^[0-9a-fA-F]{2}$/.test(h) ? parseInt(h, 16) : NaN));
    if (mac.length !== 6 || mac.some((b) => Number.isNaN(b))) throw new EfuseError(`not a MAC address: ${spec.macAddress}`);
    this.mac = Uint8Array.from(mac);
    if (!Number.isInteger(spec.hmacKeyBlock) || spec.hmacKeyBlock < 0 || spec.hmacKeyBlock >= KEY_BLOCKS) throw new EfuseError(`the HMAC key block must be BLOCK_KEY0 to BLOCK_KEY5, not ${spec.hmacKeyBlock}`);
    if (spec.hmacKey.length !== 32) throw new EfuseError(`an eFuse key block holds 32 bytes, not ${spec.hmacKey.length}`);
    this.keys = Array.from({ length: KEY_BLOCKS }, () => ({ purpose: 'USER' as KeyPurpose, readProtected: false, writeProtected: false, key: Buffer.alloc(32) }));
    this.keys[spec.hmacKeyBlock] = { purpose: 'HMAC_UP', readProtected: true, writeProtected: true, key: Buffer.from(spec.hmacKey) };
    this.revision = spec.revision ?? { major: 0, minor: 2 };
    this.secureVersion = spec.secureVersion ?? 0;
  }

  /**
   * esp_hmac_calculate(HMAC_KEY<block>, message) in upstream mode: HMAC-SHA256 with the key block,
   * which must have purpose HMAC_UP (the peripheral refuses any other).
   */
  hmac(block: number, message: Uint8Array): Buffer {
    const k = this.keys[block];
    if (!k) throw new EfuseError(`no key block BLOCK_KEY${block}: the ESP32-S3 has BLOCK_KEY0 to BLOCK_KEY5`);
    if (k.purpose !== 'HMAC_UP') throw new EfuseError(`eFuse HMAC failed: BLOCK_KEY${block} has purpose ${k.purpose}, not HMAC_UP`);
    return createHmac('sha256', k.key).update(message).digest();
  }

  // One-way burns (espefuse burn-key, burn-key-digest, burn-efuse): a bit, once 1, stays 1, so every
  // burn that would clear a bit or rewrite a written block is refused with why, and nothing changes.

  /**
   * Burns a key block with its purpose (`espefuse burn-key BLOCK_KEYn key.bin PURPOSE`; for
   * SECURE_BOOT_DIGESTn, `burn-key-digest`). The block and its purpose are write-protected after, as
   * espefuse does; keys other than digests are read-protected unless `readable`.
   */
  burnKey(block: number, purpose: KeyPurpose, key: Uint8Array, o: { readable?: boolean } = {}): void {
    const k = this.keys[block];
    if (!k) throw new EfuseError(`no key block BLOCK_KEY${block}: the ESP32-S3 has BLOCK_KEY0 to BLOCK_KEY5`);
    if (!KEY_PURPOSES.includes(purpose) || purpose === 'RESERVED' || purpose === 'USER') throw new EfuseError(`${purpose} is not a key purpose one burns a key for`);
    if (key.length !== 32) throw new EfuseError(`an eFuse key block holds 32 bytes, not ${key.length}`);
    if (k.writeProtected || k.purpose !== 'USER' || k.key.some((b) => b !== 0)) {
      throw new EfuseError(`BLOCK_KEY${block} is already burned (purpose ${k.purpose}): eFuses cannot be written twice`);
    }
    const digestSlot = SECURE_BOOT_DIGEST_PURPOSES.indexOf(purpose as (typeof SECURE_BOOT_DIGEST_PURPOSES)[number]);
    if (digestSlot >= 0) {
      const other = this.keys.findIndex((x) => x.purpose === purpose);
      if (other >= 0) throw new EfuseError(`${purpose} is already burned in BLOCK_KEY${other}`);
    }
    this.keys[block] = { purpose, readProtected: digestSlot < 0 && !o.readable, writeProtected: true, key: Buffer.from(key) };
  }

  /** SECURE_BOOT_EN: from the next reset the ROM and the bootloader boot only signed images. */
  enableSecureBoot(): void {
    this.secureBootEnabled = true;
  }

  /** SECURE_BOOT_KEY_REVOKEn: the key in digest slot n is never trusted again. */
  revokeSecureBootKey(slot: number): void {
    if (!Number.isInteger(slot) || slot < 0 || slot > 2) throw new EfuseError(`secure boot key slots are 0 to 2, not ${slot}`);
    this.secureBootKeyRevoked[slot] = true;
  }

  /** Raises SECURE_VERSION to `version` (burns bits); asking for less than it holds is refused. */
  burnSecureVersion(version: number): void {
    const [, width] = BLOCK0_FIELDS.SECURE_VERSION;
    if (!Number.isInteger(version) || version < 0 || version > width) throw new EfuseError(`SECURE_VERSION counts 0 to ${width}, not ${version}`);
    if (version < this.secureVersion) throw new EfuseError(`SECURE_VERSION is ${this.secureVersion}: eFuse bits cannot be cleared to make it ${version}`);
    this.secureVersion = version;
  }

  /** The secure boot keys the chip trusts: each SECURE_BOOT_DIGESTn block, with its revocation bit. */
  secureBootKeys(): TrustedKey[] {
    const out: TrustedKey[] = [];
    this.keys.forEach((k) => {
      const slot = SECURE_BOOT_DIGEST_PURPOSES.indexOf(k.purpose as (typeof SECURE_BOOT_DIGEST_PURPOSES)[number]);
      if (slot >= 0) out.push({ digest: hex(k.key), slot, revoked: this.secureBootKeyRevoked[slot]! });
    });
    return out.sort((a, b) => a.slot! - b.slot!);
  }

  /** BLOCK0 as the chip reads it (six words). */
  block0(): number[] {
    const w = [0, 0, 0, 0, 0, 0];
    const bits = (on: (k: KeyBlock) => boolean) => this.keys.reduce((acc, k, i) => acc | (on(k) ? 1 << i : 0), 0);
    setField(w, 'WR_DIS_KEY_PURPOSES', bits((k) => k.writeProtected));
    setField(w, 'WR_DIS_KEYS', bits((k) => k.writeProtected));
    setField(w, 'RD_DIS', bits((k) => k.readProtected));
    setField(w, 'SPI_BOOT_CRYPT_CNT', this.spiBootCryptCnt);
    this.secureBootKeyRevoked.forEach((r, i) => setField(w, `SECURE_BOOT_KEY_REVOKE${i}` as Block0Field, r ? 1 : 0));
    this.keys.forEach((k, i) => setField(w, `KEY_PURPOSE_${i}` as Block0Field, KEY_PURPOSES.indexOf(k.purpose)));
    setField(w, 'SECURE_BOOT_EN', this.secureBootEnabled ? 1 : 0);
    setField(w, 'DIS_DOWNLOAD_MODE', this.downloadModeDisabled ? 1 : 0);
    setField(w, 'ENABLE_SECURITY_DOWNLOAD', this.securityDownloadEnabled ? 1 : 0);
    // SECURE_VERSION is a thermometer code: version n is n bits burned.
    setField(w, 'SECURE_VERSION', 2 ** this.secureVersion - 1);
    return w;
  }

  /** Every eFuse read register the model defines, by address (what READ_REG answers). */
  registers(): Map<number, number> {
    const r = new Map<number, number>();
    this.block0().forEach((word, i) => r.set(EFUSE_BLOCK0 + 4 * i, word));
    const m = this.mac;
    r.set(EFUSE_BLOCK1, ((m[2]! << 24) | (m[3]! << 16) | (m[4]! << 8) | m[5]!) >>> 0);
    r.set(EFUSE_BLOCK1 + 4, (m[0]! << 8) | m[1]!);
    // Word 3: WAFER_VERSION_MINOR_LO [20:18], PKG_VERSION [23:21] (QFN56), BLK_VERSION_MINOR [26:24] (1),
    // FLASH_CAP [29:27] (no in-package flash: a module's external flash). Word 5: WAFER_VERSION_MINOR_HI
    // [23], WAFER_VERSION_MAJOR [25:24].
    r.set(EFUSE_BLOCK1 + 12, (((this.revision.minor & 7) << 18) | (1 << 24)) >>> 0);
    r.set(EFUSE_BLOCK1 + 20, ((((this.revision.minor >> 3) & 1) << 23) | ((this.revision.major & 3) << 24)) >>> 0);
    // BLOCK2 word 4: BLK_VERSION_MAJOR [1:0] (1).
    r.set(EFUSE_BLOCK2 + 16, 1);
    this.keys.forEach((k, i) => {
      for (let w = 0; w < 8; w++) r.set(EFUSE_KEY0 + 0x20 * i + 4 * w, k.readProtected ? 0 : k.key.readUInt32LE(4 * w));
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
    if (this.securityDownloadEnabled) flags |= SECURITY_FLAGS.SECURE_DOWNLOAD_ENABLE;
    if (popcount(this.spiBootCryptCnt) % 2 === 1) flags |= SECURITY_FLAGS.FLASH_CRYPT_CNT;
    putU32(out, 0, flags);
    out[4] = this.spiBootCryptCnt;
    this.keys.forEach((k, i) => (out[5 + i] = KEY_PURPOSES.indexOf(k.purpose)));
    putU32(out, 12, chipId);
    putU32(out, 16, 0);
    return out;
  }
}

function popcount(n: number): number {
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
