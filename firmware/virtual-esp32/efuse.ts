// A virtual ESP32-S3's eFuses: one model per chip, which everything that asks the chip about its
// fuses reads (docs/efuse-model.md): the ROM loader's READ_REG (rom/registers.ts) and
// GET_SECURITY_INFO (rom/loader.ts), the firmware's HMAC (chip.ts fuseHmac, with the key block the
// manifest names) and so `fleet efuse summary`, which reads the ROM as espefuse does.
// The chip's layout (field positions, blocks, protection bits) is the chip module's
// (firmware/chip/esp32s3-efuse.ts). A read-protected key block reads as zeros, as on the chip; only
// the HMAC peripheral uses it. Burning goes through `programBlock`, what the eFuse controller's
// program command does (rom/registers.ts drives it as espefuse does).
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { equalBytes, hex, putU32 } from '../image/bytes.ts';
import type { TrustedKey } from '../image/secure-boot.ts';
import { bytesToWords, EFUSE_RS_CHECK_BYTES, efuseRsCheck, wordsToBytes } from '../chip/efuse-rs.ts';
import {
  BLOCK0_FIELDS,
  block0WritableMask,
  block1Mac,
  block1Revision,
  block1Words,
  type ChipRevision,
  EFUSE_BLOCKS,
  EFUSE_RD_REPEAT_ERR0,
  EFUSE_RD_RS_ERR0,
  EFUSE_RD_RS_ERR1,
  EfuseError,
  getField,
  KEY_BLOCKS,
  KEY_PURPOSES,
  orField,
  popcount,
  RS_ERROR_FIELDS,
  SECURE_BOOT_DIGEST_PURPOSES,
  SECURITY_FLAGS,
  type Block0Field,
  type KeyPurpose,
} from '../chip/esp32s3-efuse.ts';

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
  revision?: ChipRevision;
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
    const block1 = block1Words(mac, revision);
    this.burnCoded(1, block1);
    // BLOCK2 word 4: BLK_VERSION_MAJOR [1:0] (1).
    this.burnCoded(2, [0, 0, 0, 0, 1, 0, 0, 0]);
    this.burnKeyBlock(spec.hmacKeyBlock, 'HMAC_UP', spec.hmacKey, true);
    if (spec.secureVersion) this.burnSecureVersion(spec.secureVersion);
  }

  /** The factory base MAC (BLOCK1). */
  get mac(): Uint8Array {
    return block1Mac(this.blocks[1]!);
  }

  /** WAFER_VERSION_MAJOR and MINOR (BLOCK1). */
  get revision(): ChipRevision {
    return block1Revision(this.blocks[1]!);
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

/** The product manifest's `defines.fuse.hmac_key`: the key block the firmware's fw_fuse.c computes its HMAC with. */
export function manifestHmacKeyBlock(manifestPath = new URL('../src/platform/moddable/manifest.json', import.meta.url)): number {
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { defines?: { fuse?: { hmac_key?: unknown } } };
  const block = manifest.defines?.fuse?.hmac_key;
  if (typeof block !== 'number' || !Number.isInteger(block) || block < 0 || block >= KEY_BLOCKS) throw new EfuseError(`the manifest's defines.fuse.hmac_key must be 0 to 5, not ${JSON.stringify(block)}`);
  return block;
}

/** A new chip's eFuses from its device key (64 hex digits, burned in the manifest's key block) and MAC. */
export function efusesFromFuseKey(macAddress: string, fuseKeyHex: string | undefined): Efuses {
  if (fuseKeyHex === undefined) throw new Error('a virtual board needs its eFuses or its fuse key (fuseKeyHex)');
  if (!/^[0-9a-fA-F]{64}$/.test(fuseKeyHex)) throw new Error('fuseKeyHex must be 32 bytes of hex');
  return new Efuses({ macAddress, hmacKey: Buffer.from(fuseKeyHex, 'hex'), hmacKeyBlock: manifestHmacKeyBlock() });
}
