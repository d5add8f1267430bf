// Burning an ESP32-S3's secure boot eFuses through its ROM bootloader, as espefuse does: our own
// client of the eFuse controller over READ_REG/WRITE_REG, so the same code burns a real board and a
// virtual one (firmware/virtual-esp32/rom/registers.ts models the controller).
//   - What to burn (`planBurn`): checked against what the fuses hold first, and refused with why
//     before anything is written: a key block already used, a purpose already burned, a
//     SECURE_VERSION lower than burned, a field write-protected, secure boot with no key to trust.
//   - How (`EfuseProgrammer`): the sequence of espefuse's esp32s3 driver (esptool: espefuse/efuse/
//     esp32s3/fields.py set_efuse_timing, clear_pgm_registers, efuse_program, efuse_read; base_fields
//     burn_words): the timing registers for the 40 MHz crystal, the data in EFUSE_PGM_DATA0..7 and
//     the Reed–Solomon check bytes in EFUSE_PGM_CHECK_VALUE0..2, the write opcode in EFUSE_CONF,
//     PGM_CMD with the block number in EFUSE_CMD, waiting for the command bit to clear, clearing the
//     data registers, then the read opcode and READ_CMD. Blocks are burned key block first, then
//     BLOCK0, and the write protection last, as espefuse orders them.
//   - Whether it took (`checkBurn`): the fuses read back must say what was asked.
import { bytesToWords, efuseRsCheck } from '../../firmware/chip/efuse-rs.ts';
import { type Block0Field, EFUSE_CMD, EFUSE_CONF, EFUSE_DAC_CONF, EFUSE_PGM_CHECK_VALUE0, EFUSE_PGM_CMD, EFUSE_PGM_DATA0, EFUSE_RD_RS_ERR0, EFUSE_RD_RS_ERR1, EFUSE_READ_CMD, EFUSE_READ_OP_CODE, EFUSE_WR_TIM_CONF1, EFUSE_WR_TIM_CONF2, EFUSE_WRITE_OP_CODE, KEY_PURPOSES, orField, RS_ERROR_FIELDS, SECURE_BOOT_DIGEST_PURPOSES, wrDisBitOf } from '../../firmware/chip/esp32s3-efuse.ts';
import { block0Words, decodeEfuses, summaryRegisters, type EfuseReading, type EfuseSummary } from './efuse-summary.ts';

/** What a burn reads: the summary's registers and the coding-error registers. */
export function burnRegisters(): number[] {
  return [...summaryRegisters(), EFUSE_RD_RS_ERR0, EFUSE_RD_RS_ERR1];
}

export type DigestPurpose = (typeof SECURE_BOOT_DIGEST_PURPOSES)[number];

export type BurnRequest =
  | { kind: 'key-digest'; block: number; purpose: DigestPurpose; digest: Buffer; source: string }
  | { kind: 'secure-boot-en' }
  | { kind: 'revoke-key'; slot: number }
  | { kind: 'secure-version'; version: number };

/** One program command: a block's eight data words and, for blocks 1 to 10, its check bytes. */
export interface BurnStep {
  block: number;
  data: number[];
  check?: Uint8Array;
  what: string;
}

export interface BurnPlan {
  /** Empty when the fuses already say what was asked. */
  steps: BurnStep[];
  /** What will be burned, or why nothing needs to be. */
  lines: string[];
}

/** Refused before anything is written: the fuses already hold something that forbids it. */
export class BurnRefusedError extends Error {
  override name = 'BurnRefusedError';
}

/** Burned, but the fuses read back do not say what was asked. */
export class BurnCheckError extends Error {
  override name = 'BurnCheckError';
}

function wrDisBit(r: EfuseReading, bit: number): boolean {
  return ((block0Words(r)[0]! >>> bit) & 1) === 1;
}

/** BLOCK0's eight program data words with the fields set (the other bits 0: programming only ORs). */
function block0Bits(fields: [Block0Field, number][]): number[] {
  const w = [0, 0, 0, 0, 0, 0, 0, 0];
  for (const [field, value] of fields) orField(w, field, value);
  return w;
}

/** The SECURE_BOOT_DIGESTn slots burned and not revoked. */
function trustedSlots(s: EfuseSummary, revoked: readonly boolean[] = s.revoked): number[] {
  return s.keys.map((k) => SECURE_BOOT_DIGEST_PURPOSES.indexOf(k.purpose as DigestPurpose)).filter((slot) => slot >= 0 && !revoked[slot]);
}

/** Which WR_DIS bit protects each field the burns touch: the model's table (esp_efuse_table.csv WR_DIS.*). */
const WR_DIS = {
  SECURE_BOOT_EN: wrDisBitOf('SECURE_BOOT_EN'),
  SECURE_VERSION: wrDisBitOf('SECURE_VERSION'),
  revoke: (slot: number) => wrDisBitOf(`SECURE_BOOT_KEY_REVOKE${slot}` as Block0Field),
  purpose: (k: number) => wrDisBitOf(`KEY_PURPOSE_${k}` as Block0Field),
} as const;

export function planBurn(reading: EfuseReading, req: BurnRequest): BurnPlan {
  const s = decodeEfuses(reading);
  // espefuse refuses too: in Secure Download Mode the ROM does not let a tool read eFuses.
  if (s.securityDownload || reading.security.flags & (1 << 2)) throw new BurnRefusedError('the board is in Secure Download Mode (ENABLE_SECURITY_DOWNLOAD): its ROM does not let tools read or burn eFuses');
  switch (req.kind) {
    case 'key-digest': {
      const n = req.block;
      const k = s.keys[n]!;
      const hex = req.digest.toString('hex');
      const slot = SECURE_BOOT_DIGEST_PURPOSES.indexOf(req.purpose);
      if (k.purpose === req.purpose && k.value === hex && !k.writable) {
        return { steps: [], lines: [`BLOCK_KEY${n} already holds ${req.purpose} = ${hex}: nothing to burn`] };
      }
      const other = s.keys.find((x) => x.purpose === req.purpose);
      if (other) throw new BurnRefusedError(`${req.purpose} is already burned in BLOCK_KEY${other.block}: a purpose is burned once; use another SECURE_BOOT_DIGESTn (fleet efuse summary shows which are free)`);
      const used = k.purpose !== 'USER' || !k.readable || !k.writable || wrDisBit(reading, WR_DIS.purpose(n)) || k.value !== '00'.repeat(32);
      if (used) {
        const why = [k.purpose !== 'USER' ? `purpose ${k.purpose}` : '', !k.readable ? 'read-protected' : '', !k.writable ? 'write-protected' : '', k.value && k.value !== '00'.repeat(32) ? 'holds data' : ''].filter(Boolean).join(', ') || 'purpose write-protected';
        throw new BurnRefusedError(`BLOCK_KEY${n} is already used (${why}): eFuses cannot be written twice; pick an empty key block (fleet efuse summary lists them)`);
      }
      if (s.revoked[slot]) throw new BurnRefusedError(`SECURE_BOOT_KEY_REVOKE${slot} is burned: a key in ${req.purpose} would never be trusted; use another digest slot`);
      const data = bytesToWords(req.digest);
      return {
        steps: [
          { block: 4 + n, data, check: efuseRsCheck(req.digest), what: `BLOCK_KEY${n} (BLOCK${4 + n}) = ${hex}` },
          { block: 0, data: block0Bits([[`KEY_PURPOSE_${n}` as Block0Field, KEY_PURPOSES.indexOf(req.purpose)]]), what: `KEY_PURPOSE_${n} = ${req.purpose}` },
          { block: 0, data: block0Bits([['WR_DIS_KEY_PURPOSES', 1 << n], ['WR_DIS_KEYS', 1 << n]]), what: `write protection of BLOCK_KEY${n} and KEY_PURPOSE_${n}` },
        ],
        lines: [
          `BLOCK_KEY${n} (BLOCK${4 + n}) is empty: burn ${req.purpose} = ${hex}`,
          `  (the SHA-256 of the RSA-3072 public key of ${req.source}, as espefuse burn-key-digest)`,
          `then KEY_PURPOSE_${n} = ${req.purpose}, and write-protect BLOCK_KEY${n} and KEY_PURPOSE_${n}`,
        ],
      };
    }
    case 'secure-boot-en': {
      if (s.secureBoot) return { steps: [], lines: ['SECURE_BOOT_EN is already burned: nothing to burn'] };
      if (wrDisBit(reading, WR_DIS.SECURE_BOOT_EN)) throw new BurnRefusedError(`SECURE_BOOT_EN is write-protected (WR_DIS bit ${WR_DIS.SECURE_BOOT_EN}): it cannot be burned`);
      const slots = trustedSlots(s);
      if (slots.length === 0) throw new BurnRefusedError('no SECURE_BOOT_DIGESTn is burned (or every one is revoked): with secure boot on, the board would boot nothing; burn a key digest first (fleet efuse burn-key --digest)');
      return {
        steps: [{ block: 0, data: block0Bits([['SECURE_BOOT_EN', 1]]), what: 'SECURE_BOOT_EN' }],
        lines: [`burn SECURE_BOOT_EN: from the next reset the board boots only images signed by a key in ${slots.map((x) => `SECURE_BOOT_DIGEST${x}`).join(', ')}`],
      };
    }
    case 'revoke-key': {
      const slot = req.slot;
      if (s.revoked[slot]) return { steps: [], lines: [`SECURE_BOOT_KEY_REVOKE${slot} is already burned: nothing to burn`] };
      if (wrDisBit(reading, WR_DIS.revoke(slot))) throw new BurnRefusedError(`SECURE_BOOT_KEY_REVOKE${slot} is write-protected (WR_DIS bit ${WR_DIS.revoke(slot)}): it cannot be burned`);
      const after = s.revoked.map((r, i) => r || i === slot);
      if (s.secureBoot && trustedSlots(s, after).length === 0) {
        throw new BurnRefusedError(`revoking SECURE_BOOT_DIGEST${slot} would leave no key to trust with secure boot on: the board would never boot again; burn another key digest (and sign with it) first`);
      }
      const burned = s.keys.find((k) => k.purpose === `SECURE_BOOT_DIGEST${slot}`);
      return {
        steps: [{ block: 0, data: block0Bits([[`SECURE_BOOT_KEY_REVOKE${slot}` as Block0Field, 1]]), what: `SECURE_BOOT_KEY_REVOKE${slot}` }],
        lines: [`burn SECURE_BOOT_KEY_REVOKE${slot}: ${burned ? `the key in BLOCK_KEY${burned.block} (${burned.value})` : 'a key in that slot'} is never trusted again`],
      };
    }
    case 'secure-version': {
      const v = req.version;
      if (v < s.secureVersion) throw new BurnRefusedError(`SECURE_VERSION is ${s.secureVersion}: eFuse bits cannot be cleared to make it ${v}`);
      if (v === s.secureVersion) return { steps: [], lines: [`SECURE_VERSION is already ${v}: nothing to burn`] };
      if (wrDisBit(reading, WR_DIS.SECURE_VERSION)) throw new BurnRefusedError(`SECURE_VERSION is write-protected (WR_DIS bit ${WR_DIS.SECURE_VERSION}): it cannot be raised`);
      return {
        // A thermometer code, as ESP-IDF's anti-rollback burns it: version n is the n low bits.
        steps: [{ block: 0, data: block0Bits([['SECURE_VERSION', 2 ** v - 1]]), what: `SECURE_VERSION = ${v}` }],
        lines: [`raise SECURE_VERSION from ${s.secureVersion} to ${v}: from the next reset, an app whose secure_version is below ${v} never boots`],
      };
    }
  }
}

/** The coding-error state of blocks 1..10 (EFUSE_RD_RS_ERR0/1): bytes corrected and the fail bit. */
export function codingErrors(r: EfuseReading): { block: number; errors: number; fail: boolean }[] {
  return RS_ERROR_FIELDS.map(([reg, at], i) => {
    const v = r.registers.get(reg) ?? 0;
    return { block: i + 1, errors: (v >>> at) & 7, fail: ((v >>> (at + 3)) & 1) === 1 };
  }).filter((e) => e.errors > 0 || e.fail);
}

/** Checks the fuses read back after the burn say what was asked; the sentence that says what they say instead. */
export function checkBurn(after: EfuseReading, req: BurnRequest): string[] {
  const s = decodeEfuses(after);
  const problems: string[] = [];
  for (const e of codingErrors(after)) {
    if (req.kind === 'key-digest' && e.block === 4 + req.block) problems.push(`BLOCK_KEY${req.block} reports a coding error (${e.fail ? 'uncorrectable' : `${e.errors} bytes corrected`})`);
  }
  switch (req.kind) {
    case 'key-digest': {
      const k = s.keys[req.block]!;
      const hex = req.digest.toString('hex');
      if (k.value !== hex) problems.push(`BLOCK_KEY${req.block} reads ${k.value ?? '(read-protected)'}, not ${hex}`);
      if (k.purpose !== req.purpose) problems.push(`KEY_PURPOSE_${req.block} reads ${k.purpose}, not ${req.purpose}`);
      if (k.writable || !wrDisBit(after, WR_DIS.purpose(req.block))) problems.push(`BLOCK_KEY${req.block} or KEY_PURPOSE_${req.block} is still writable`);
      break;
    }
    case 'secure-boot-en':
      if (!s.secureBoot) problems.push('SECURE_BOOT_EN reads False');
      if (!(after.security.flags & 1)) problems.push('GET_SECURITY_INFO does not report secure boot');
      break;
    case 'revoke-key':
      if (!s.revoked[req.slot]) problems.push(`SECURE_BOOT_KEY_REVOKE${req.slot} reads False`);
      break;
    case 'secure-version':
      if (s.secureVersion !== req.version) problems.push(`SECURE_VERSION reads ${s.secureVersion}, not ${req.version}`);
      break;
  }
  return problems;
}

/** READ_REG and WRITE_REG of the ROM (esptool-js's loader, or the virtual chip's registers in tests). */
export interface RegisterIo {
  readReg(address: number): Promise<number>;
  writeReg(address: number, value: number, mask?: number, delayAfterUs?: number): Promise<void>;
}

/** How long a command may take before the controller is taken for stuck (espefuse: EFUSE_BURN_TIMEOUT 0.25 s). */
const IDLE_TIMEOUT_MS = 1000;

export class EfuseProgrammer {
  constructor(private readonly io: RegisterIo) {}

  /** esptool's update_reg: read, replace the bits of `mask` with `value` shifted into it, write. */
  private async updateReg(address: number, mask: number, value: number): Promise<void> {
    let shift = 0;
    while (!((mask >>> shift) & 1)) shift++;
    const old = await this.io.readReg(address);
    await this.io.writeReg(address, ((old & ~mask) | ((value << shift) & mask)) >>> 0);
  }

  private async waitIdle(): Promise<void> {
    const until = Date.now() + IDLE_TIMEOUT_MS;
    while (Date.now() < until) {
      // Read twice, as espefuse does: after READ_CMD the first read may come too early.
      if (((await this.io.readReg(EFUSE_CMD)) & (EFUSE_PGM_CMD | EFUSE_READ_CMD)) === 0 && ((await this.io.readReg(EFUSE_CMD)) & (EFUSE_PGM_CMD | EFUSE_READ_CMD)) === 0) return;
    }
    throw new BurnCheckError('the eFuse controller did not finish its command (EFUSE_CMD stayed busy)');
  }

  private async clearProgramRegisters(): Promise<void> {
    await this.waitIdle();
    for (let i = 0; i < 8; i++) await this.io.writeReg(EFUSE_PGM_DATA0 + 4 * i, 0);
  }

  /** Timing for the 40 MHz crystal (the only one the ESP32-S3's eFuses support), then idle and clean. */
  async setup(): Promise<void> {
    await this.updateReg(EFUSE_DAC_CONF, 0xff << 9, 0xff); // EFUSE_DAC_NUM
    await this.updateReg(EFUSE_DAC_CONF, 0xff, 0x28); // EFUSE_DAC_CLK_DIV
    await this.updateReg(EFUSE_WR_TIM_CONF1, 0xffff << 8, 0x3000); // EFUSE_PWR_ON_NUM
    await this.updateReg(EFUSE_WR_TIM_CONF2, 0xffff, 0x190); // EFUSE_PWR_OFF_NUM
    await this.clearProgramRegisters();
  }

  /** Reloads the read registers (READ_CMD). */
  async read(): Promise<void> {
    await this.waitIdle();
    await this.io.writeReg(EFUSE_CONF, EFUSE_READ_OP_CODE);
    // A millisecond before the ROM answers, as espefuse gives it: the ROM loader reads eFuse
    // registers after each command, which must not race the reload.
    await this.io.writeReg(EFUSE_CMD, EFUSE_READ_CMD, 0xffffffff, 1000);
    await this.waitIdle();
  }

  /** Burns one block: data, check bytes, PGM_CMD, then the read registers reloaded. */
  async program(step: BurnStep): Promise<void> {
    await this.setup();
    for (let i = 0; i < 8; i++) await this.io.writeReg(EFUSE_PGM_DATA0 + 4 * i, step.data[i] ?? 0);
    if (step.check) for (const [i, word] of bytesToWords(step.check).entries()) await this.io.writeReg(EFUSE_PGM_CHECK_VALUE0 + 4 * i, word);
    await this.waitIdle();
    await this.io.writeReg(EFUSE_CONF, EFUSE_WRITE_OP_CODE);
    await this.io.writeReg(EFUSE_CMD, EFUSE_PGM_CMD | (step.block << 2));
    await this.waitIdle();
    await this.clearProgramRegisters();
    await this.read();
  }
}

/** Reads what a burn needs: the registers and GET_SECURITY_INFO. */
export interface EfuseReader {
  (addresses: readonly number[]): Promise<EfuseReading>;
}

export interface BurnOutcome {
  plan: BurnPlan;
  /** What the fuses say after; undefined when nothing was burned. */
  after?: EfuseSummary;
}

/**
 * Reads, plans (refusing with BurnRefusedError before anything is written), asks `confirm` (which
 * may throw to stop), burns each step, reads back and checks (BurnCheckError when the fuses do not
 * say what was asked).
 */
export async function burnEfuses(io: RegisterIo, readEfuses: EfuseReader, req: BurnRequest, confirm: (plan: BurnPlan) => Promise<void>): Promise<BurnOutcome> {
  const before = await readEfuses(burnRegisters());
  const plan = planBurn(before, req);
  if (plan.steps.length === 0) return { plan };
  await confirm(plan);
  const programmer = new EfuseProgrammer(io);
  let done = 0;
  try {
    for (const step of plan.steps) {
      await programmer.program(step);
      done++;
    }
  } catch (err) {
    // Fuses may now be half burned (a key block without its purpose or protection): say so, whatever
    // broke the line, rather than a connection error that invites a retry into a used block.
    const cause = err instanceof Error ? err.message : String(err);
    throw new BurnCheckError(`the burn stopped at step ${done + 1} of ${plan.steps.length} (${plan.steps[done]!.what}): ${cause}; the fuses may be partly burned: read them with fleet efuse summary before anything else`);
  }
  const after = await readEfuses(burnRegisters());
  const problems = checkBurn(after, req);
  if (problems.length > 0) throw new BurnCheckError(`burned, but the fuses read back do not say what was asked: ${problems.join('; ')}`);
  return { plan, after: decodeEfuses(after) };
}
