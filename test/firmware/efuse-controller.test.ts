// The ESP32-S3 eFuse controller of the virtual chip (rom/registers.ts) at register level, driven as
// espefuse drives it: PGM_DATA0..7 and PGM_CHECK_VALUE0..2, the write opcode in EFUSE_CONF, PGM_CMD
// with the block number, the command bit cleared when done, READ_CMD to reload the read registers.
// Programming ORs bits into the one eFuse model (never clears them), leaves write-protected blocks
// and fields as they are, and reports check bytes that do not fit the data as a coding error; the
// Reed–Solomon check is the one espefuse computes (reedsolo's RSCodec(12)).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CHIPS } from '../../firmware/image/chips.ts';
import { Efuses } from '../../firmware/virtual-esp32/efuse.ts';
import { EFUSE_BLOCK0, EFUSE_CMD, EFUSE_CONF, EFUSE_KEY0, EFUSE_PGM_CHECK_VALUE0, EFUSE_PGM_DATA0, EFUSE_RD_RS_ERR0, EFUSE_READ_OP_CODE, EFUSE_WRITE_OP_CODE, getField } from '../../firmware/chip/esp32s3-efuse.ts';
import { efuseRsCheck, gfMul, gfPow2 } from '../../firmware/chip/efuse-rs.ts';
import { Esp32s3Registers } from '../../firmware/virtual-esp32/rom/registers.ts';
import { burnEfuses, burnRegisters, BurnCheckError, checkBurn, EfuseProgrammer, planBurn, type RegisterIo } from '../../harness/flash/efuse-burn.ts';
import type { EfuseReading } from '../../harness/flash/efuse-summary.ts';

const KEY = Buffer.from('a5'.repeat(16) + '3c'.repeat(16), 'hex');
const DIGEST = createHash('sha256').update('a public key').digest();

function chip() {
  const efuses = new Efuses({ macAddress: '24:0A:C4:10:00:2A', hmacKey: KEY, hmacKeyBlock: 3 });
  return { efuses, registers: new Esp32s3Registers({ efuses, flashSizeBytes: 0x800000 }) };
}

/** READ_REG/WRITE_REG as the ROM loader applies them. */
function ioOf(registers: Esp32s3Registers): RegisterIo & { writes: [number, number][] } {
  const writes: [number, number][] = [];
  return {
    writes,
    readReg: async (a) => registers.read(a),
    writeReg: async (a, v, mask = 0xffffffff) => {
      writes.push([a, v]);
      registers.write(a, v, mask);
    },
  };
}

function readingOf(registers: Esp32s3Registers, efuses: Efuses): EfuseReading {
  const info = efuses.securityInfo(CHIPS.esp32s3.imageChipId);
  return {
    chip: 'ESP32-S3',
    registers: new Map(burnRegisters().map((a) => [a, registers.read(a)])),
    security: { flags: new DataView(info.buffer).getUint32(0, true), flashCryptCnt: info[4]!, keyPurposes: [...info.subarray(5, 12)] },
  };
}

/** One PGM_CMD by hand: data, check, opcode, command. */
function program(registers: Esp32s3Registers, block: number, data: number[], check: number[] = [0, 0, 0], opcode = EFUSE_WRITE_OP_CODE) {
  data.forEach((w, i) => registers.write(EFUSE_PGM_DATA0 + 4 * i, w, 0xffffffff));
  check.forEach((w, i) => registers.write(EFUSE_PGM_CHECK_VALUE0 + 4 * i, w, 0xffffffff));
  registers.write(EFUSE_CONF, opcode, 0xffffffff);
  registers.write(EFUSE_CMD, 2 | (block << 2), 0xffffffff);
}

function readCommand(registers: Esp32s3Registers) {
  registers.write(EFUSE_CONF, EFUSE_READ_OP_CODE, 0xffffffff);
  registers.write(EFUSE_CMD, 1, 0xffffffff);
}

const keyWord = (registers: Esp32s3Registers, block: number, w: number) => registers.read(EFUSE_KEY0 + 0x20 * block + 4 * w);

describe('the Reed–Solomon check of eFuse blocks 1 to 10', () => {
  it("is espefuse's: known answers of reedsolo 1.7.0 RSCodec(12), and every codeword has the roots 2^0 … 2^11", () => {
    // python3: bytes(reedsolo.RSCodec(12).encode(data))[32:].hex()
    expect(Buffer.from(efuseRsCheck(Uint8Array.from({ length: 32 }, (_, i) => i + 1))).toString('hex')).toBe('f14217bace89a48fc885d5ca');
    expect(Buffer.from(efuseRsCheck(KEY)).toString('hex')).toBe('8f7946388ca44bba5d0bd6d1');
    expect(Buffer.from(efuseRsCheck(new Uint8Array(32))).toString('hex')).toBe('00'.repeat(12));
    for (const data of [KEY, DIGEST, Buffer.alloc(32, 0xff)]) {
      const codeword = [...data, ...efuseRsCheck(data)];
      for (let j = 0; j < 12; j++) expect(codeword.reduce((acc, b) => gfMul(acc, gfPow2(j)) ^ b, 0)).toBe(0);
    }
    expect(() => efuseRsCheck(new Uint8Array(31))).toThrow(/32 bytes, not 31/);
  });
});

describe('the eFuse controller of the virtual chip', () => {
  it('burns a key block on PGM_CMD with the write opcode, clears the command bit and the data registers, and shows it after READ_CMD', () => {
    const { efuses, registers } = chip();
    const words = [...new Uint32Array(DIGEST.buffer.slice(DIGEST.byteOffset, DIGEST.byteOffset + 32))];
    const check = [...new Uint32Array(efuseRsCheck(DIGEST).slice().buffer)];
    program(registers, 4, words, check);
    // The hardware is done: the command bit is clear (the block number stays), the data registers are 0.
    expect(registers.read(EFUSE_CMD) & 3).toBe(0);
    for (let i = 0; i < 11; i++) expect(registers.read(EFUSE_PGM_DATA0 + 4 * i)).toBe(0);
    // Burned in the model at once; the read registers say so only after a read command.
    expect(efuses.keyBlock(0).key.equals(DIGEST)).toBe(true);
    expect(keyWord(registers, 0, 0)).toBe(0);
    readCommand(registers);
    expect(registers.read(EFUSE_CMD) & 3).toBe(0);
    for (let w = 0; w < 8; w++) expect(keyWord(registers, 0, w)).toBe(DIGEST.readUInt32LE(4 * w));
    expect(efuses.codingFailed(4)).toBe(false);
    expect(registers.read(EFUSE_RD_RS_ERR0)).toBe(0);
  });

  it('does nothing for a command without its opcode in EFUSE_CONF, or a block past BLOCK10', () => {
    const { efuses, registers } = chip();
    program(registers, 4, [1, 2, 3, 4, 5, 6, 7, 8], [0, 0, 0], 0x1234);
    expect(registers.read(EFUSE_CMD) & 3).toBe(0);
    expect(efuses.keyBlock(0).key.equals(Buffer.alloc(32))).toBe(true);
    const before = efuses.registers();
    program(registers, 12, [1, 2, 3, 4, 5, 6, 7, 8]);
    readCommand(registers);
    expect(efuses.registers()).toEqual(before);
  });

  it('ORs bits in and never clears them; BLOCK0 fields land where ESP-IDF puts them', () => {
    const { efuses, registers } = chip();
    program(registers, 5, [0x0f, 0, 0, 0, 0, 0, 0, 0x80000000]);
    program(registers, 5, [0xf0, 0, 0, 0, 0, 0, 0, 0]);
    program(registers, 5, [0, 0, 0, 0, 0, 0, 0, 0]);
    readCommand(registers);
    expect(keyWord(registers, 1, 0)).toBe(0xff);
    expect(keyWord(registers, 1, 7)).toBe(0x80000000);
    // BLOCK0: SECURE_BOOT_EN is bit 116 (word 3 bit 20), SECURE_VERSION bits 142..157, REVOKE1 bit 86.
    program(registers, 0, [0, 0, 1 << 22, 1 << 20, 0b111 << 14, 0, 0, 0]);
    readCommand(registers);
    expect(efuses.secureBootEnabled).toBe(true);
    expect(efuses.secureBootKeyRevoked).toEqual([false, true, false]);
    expect(efuses.secureVersion).toBe(3);
    const block0 = Array.from({ length: 6 }, (_, i) => registers.read(EFUSE_BLOCK0 + 4 * i));
    expect(getField(block0, 'SECURE_BOOT_EN')).toBe(1);
    expect(getField(block0, 'SECURE_VERSION')).toBe(0b111);
    // GET_SECURITY_INFO says the same: secure boot (bit 0), key 1 revoked (bit 4).
    expect(new DataView(efuses.securityInfo(CHIPS.esp32s3.imageChipId).buffer).getUint32(0, true)).toBe(1 | (1 << 4));
    // Lowering is asked of the model, not of the fuses: refused.
    expect(() => efuses.burnSecureVersion(2)).toThrow(/SECURE_VERSION is 3: eFuse bits cannot be cleared to make it 2/);
  });

  it('leaves a write-protected key block and write-protected BLOCK0 fields as they are, silently, as the chip does', () => {
    const { efuses, registers } = chip();
    // BLOCK_KEY3 holds the HMAC key, read- and write-protected.
    program(registers, 7, [0xffffffff, 0, 0, 0, 0, 0, 0, 0]);
    expect(efuses.keyBlock(3).key.equals(KEY)).toBe(true);
    // WR_DIS bit 15 protects SECURE_BOOT_EN, bit 18 SECURE_VERSION; WR_DIS itself is never protected.
    program(registers, 0, [(1 << 15) | (1 << 18), 0, 0, 0, 0, 0, 0, 0]);
    program(registers, 0, [0, 0, 1 << 21, 1 << 20, 1 << 14, 0, 0, 0]);
    readCommand(registers);
    expect(efuses.secureBootEnabled).toBe(false);
    expect(efuses.secureVersion).toBe(0);
    expect(efuses.secureBootKeyRevoked).toEqual([true, false, false]);
    expect(() => efuses.enableSecureBoot()).toThrow(/SECURE_BOOT_EN is write-protected/);
    expect(() => efuses.burnSecureVersion(1)).toThrow(/SECURE_VERSION is write-protected/);
  });

  it('reports check bytes that do not fit the data as a failed block (EFUSE_RD_RS_ERR0), and the burn check says so', () => {
    const { efuses, registers } = chip();
    program(registers, 6, [1, 2, 3, 4, 5, 6, 7, 8], [0xdeadbeef, 0, 0]);
    readCommand(registers);
    expect(efuses.codingFailed(6)).toBe(true);
    // BLOCK_KEY2's field: bits [23:20], the fail bit 23.
    expect(registers.read(EFUSE_RD_RS_ERR0)).toBe(1 << 23);
    const problems = checkBurn(readingOf(registers, efuses), { kind: 'key-digest', block: 2, purpose: 'SECURE_BOOT_DIGEST0', digest: DIGEST, source: 'k.pem' });
    expect(problems).toContain('BLOCK_KEY2 reports a coding error (uncorrectable)');
  });
});

describe("burning as espefuse's esp32s3 driver does (harness/flash/efuse-burn.ts) against the virtual controller", () => {
  it('burns a key digest: key block with its check bytes, then its purpose, then the write protection; the model trusts it', async () => {
    const { efuses, registers } = chip();
    const io = ioOf(registers);
    const outcome = await burnEfuses(io, async () => readingOf(registers, efuses), { kind: 'key-digest', block: 0, purpose: 'SECURE_BOOT_DIGEST0', digest: DIGEST, source: 'k.pem' }, async () => undefined);
    expect(outcome.plan.steps.map((s) => s.block)).toEqual([4, 0, 0]);
    // The order of the register writes of one program command, as espefuse's efuse_program.
    const cmds = io.writes.filter(([a]) => a === EFUSE_CMD || a === EFUSE_CONF).map(([a, v]) => `${a === EFUSE_CMD ? 'CMD' : 'CONF'}=${v.toString(16)}`);
    expect(cmds.slice(0, 4)).toEqual([`CONF=${EFUSE_WRITE_OP_CODE.toString(16)}`, `CMD=${(2 | (4 << 2)).toString(16)}`, `CONF=${EFUSE_READ_OP_CODE.toString(16)}`, 'CMD=1']);
    const k = efuses.keyBlock(0);
    expect([k.purpose, k.key.equals(DIGEST), k.readProtected, k.writeProtected, k.purposeWriteProtected]).toEqual(['SECURE_BOOT_DIGEST0', true, false, true, true]);
    expect(efuses.codingFailed(4)).toBe(false);
    expect(efuses.secureBootKeys()).toEqual([{ digest: DIGEST.toString('hex'), slot: 0, revoked: false }]);
    expect(outcome.after!.keys[0]).toEqual({ block: 0, purpose: 'SECURE_BOOT_DIGEST0', readable: true, writable: false, value: DIGEST.toString('hex') });
    // The HMAC key is untouched.
    expect(efuses.hmac(3, Buffer.from('m')).length).toBe(32);
  });

  it('fails the burn when the fuses read back do not say what was asked (a chip that did not burn)', async () => {
    const { efuses, registers } = chip();
    const io = ioOf(registers);
    // A chip whose program command for BLOCK_KEY1 does nothing.
    const deaf: RegisterIo = { readReg: io.readReg, writeReg: async (a, v, m) => (a === EFUSE_CMD && v === (2 | (5 << 2)) ? io.writeReg(a, 0, m) : io.writeReg(a, v, m)) };
    const burn = burnEfuses(deaf, async () => readingOf(registers, efuses), { kind: 'key-digest', block: 1, purpose: 'SECURE_BOOT_DIGEST1', digest: DIGEST, source: 'k.pem' }, async () => undefined);
    await expect(burn).rejects.toThrow(BurnCheckError);
    await expect(burn).rejects.toThrow(/BLOCK_KEY1 reads 0{64}, not [0-9a-f]{64}/);
  });

  it('says the fuses may be partly burned when the line breaks between steps (the key block burned, its purpose not)', async () => {
    const { efuses, registers } = chip();
    const io = ioOf(registers);
    // The connection fails at BLOCK0's program command: after the key block, before its purpose.
    const cut: RegisterIo = { readReg: io.readReg, writeReg: async (a, v, m) => (a === EFUSE_CMD && v === 2 ? Promise.reject(new Error('Timeout waiting for the ROM')) : io.writeReg(a, v, m)) };
    const burn = burnEfuses(cut, async () => readingOf(registers, efuses), { kind: 'key-digest', block: 1, purpose: 'SECURE_BOOT_DIGEST1', digest: DIGEST, source: 'k.pem' }, async () => undefined);
    await expect(burn).rejects.toThrow(BurnCheckError);
    await expect(burn).rejects.toThrow(/^the burn stopped at step 2 of 3 \(.+\): Timeout waiting for the ROM; the fuses may be partly burned/);
    expect(efuses.keys[1]!.key.equals(DIGEST)).toBe(true);
    expect(efuses.keys[1]!.purpose).toBe('USER');
  });

  it('plans nothing when the fuses already say it, and the programmer waits for the command bit', async () => {
    const { efuses, registers } = chip();
    efuses.burnSecureVersion(2);
    expect(planBurn(readingOf(registers, efuses), { kind: 'secure-version', version: 2 }).steps).toEqual([]);
    // A controller that never finishes: the programmer gives up with why.
    const stuck: RegisterIo = { readReg: async (a) => (a === EFUSE_CMD ? 2 : registers.read(a)), writeReg: async () => undefined };
    await expect(new EfuseProgrammer(stuck).program({ block: 0, data: [0, 0, 0, 0, 0, 1, 0, 0], what: 'x' })).rejects.toThrow(/did not finish its command/);
  });
});
