// One eFuse model per virtual chip (firmware/virtual-esp32/efuse.ts): the HMAC_UP key sits in the
// block the firmware manifest names (defines.fuse.hmac_key), read-protected; the ROM loader's
// READ_REG and GET_SECURITY_INFO, the firmware's HMAC chip call and the summary `fleet efuse
// summary` prints all read that one model, so they say the same thing; and bad input is refused.
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CHIPS } from '../../firmware/image/chips.ts';
import { chipCalls, type ChipParts } from '../../firmware/virtual-esp32/chip.ts';
import { Efuses, manifestHmacKeyBlock } from '../../firmware/virtual-esp32/efuse.ts';
import { BLOCK0_FIELDS, EFUSE_BLOCK0, EFUSE_KEY0, EfuseError, getField, KEY_PURPOSES, wrDisBitOf } from '../../firmware/chip/esp32s3-efuse.ts';
import { Esp32s3Registers } from '../../firmware/virtual-esp32/rom/registers.ts';
import { decodeEfuses, EfuseSummaryError, formatSummary, summaryRegisters } from '../../harness/flash/efuse-summary.ts';

const KEY = Buffer.from('a5'.repeat(16) + '3c'.repeat(16), 'hex');
const MAC = '24:0A:C4:10:00:2A';
const manifest = JSON.parse(readFileSync(new URL('../../firmware/src/platform/moddable/manifest.json', import.meta.url), 'utf8')) as { defines: { fuse: { hmac_key: number } } };

function chip(block = manifestHmacKeyBlock()) {
  const efuses = new Efuses({ macAddress: MAC, hmacKey: KEY, hmacKeyBlock: block });
  return { efuses, registers: new Esp32s3Registers({ efuses, flashSizeBytes: 0x800000 }) };
}

/** What the ROM answers, as `fleet efuse summary` reads it. */
function readingOf(registers: Esp32s3Registers, efuses: Efuses) {
  const info = efuses.securityInfo(CHIPS.esp32s3.imageChipId);
  return {
    chip: 'ESP32-S3',
    registers: new Map(summaryRegisters().map((a) => [a, registers.read(a)])),
    security: { flags: new DataView(info.buffer).getUint32(0, true), flashCryptCnt: info[4]!, keyPurposes: [...info.subarray(5, 12)] },
  };
}

describe('the eFuse model of a virtual chip', () => {
  it('puts the HMAC_UP key in the block the manifest names (BLOCK_KEY3), read- and write-protected', () => {
    expect(manifestHmacKeyBlock()).toBe(manifest.defines.fuse.hmac_key);
    expect(manifestHmacKeyBlock()).toBe(3);
    const { efuses, registers } = chip();
    const block0 = Array.from({ length: 6 }, (_, i) => registers.read(EFUSE_BLOCK0 + 4 * i));
    expect(KEY_PURPOSES[getField(block0, 'KEY_PURPOSE_3')]).toBe('HMAC_UP');
    for (const k of [0, 1, 2, 4, 5]) expect(KEY_PURPOSES[getField(block0, `KEY_PURPOSE_${k}` as 'KEY_PURPOSE_0')]).toBe('USER');
    expect(getField(block0, 'RD_DIS')).toBe(0b0001000);
    expect(getField(block0, 'WR_DIS_KEYS')).toBe(0b001000);
    // A read-protected key block reads as zeros through READ_REG.
    for (let w = 0; w < 8; w++) expect(registers.read(EFUSE_KEY0 + 3 * 0x20 + 4 * w)).toBe(0);
    expect(efuses.keys[3]!.key.equals(KEY)).toBe(true);
  });

  it("answers GET_SECURITY_INFO with the same purposes: HMAC_UP (8) on key 3, nothing on key 0", () => {
    const { efuses } = chip();
    const info = efuses.securityInfo(CHIPS.esp32s3.imageChipId);
    expect(info.length).toBe(20);
    expect([...info.subarray(5, 12)]).toEqual([0, 0, 0, 8, 0, 0, 0]);
    expect(new DataView(info.buffer).getUint32(0, true)).toBe(0); // no secure boot, no flash encryption, no secure download
    expect(new DataView(info.buffer).getUint32(12, true)).toBe(CHIPS.esp32s3.imageChipId);
  });

  it("computes the firmware's HMAC with that block, and refuses a block of another purpose", async () => {
    const { efuses } = chip();
    const message = Buffer.from('device-identity-v1\x01');
    const expected = createHmac('sha256', KEY).update(message).digest();
    // Only the eFuse part of the chip is used by this call.
    const calls = chipCalls({ fuseHmac: (m: Uint8Array) => efuses.hmac(manifestHmacKeyBlock(), m) } as unknown as ChipParts);
    const [mac] = await calls.fuseHmac(message);
    expect(Buffer.from(mac).equals(expected)).toBe(true);
    expect(() => efuses.hmac(0, message)).toThrow(/eFuse HMAC failed: BLOCK_KEY0 has purpose USER, not HMAC_UP/);
    expect(() => efuses.hmac(6, message)).toThrow(/no key block BLOCK_KEY6/);
    // A chip whose key sits elsewhere: the firmware's block (3) is refused, not silently used.
    expect(() => chip(0).efuses.hmac(3, message)).toThrow(/BLOCK_KEY3 has purpose USER/);
  });

  it('decodes to the summary `fleet efuse summary` prints: MAC, revision, purposes, protection, secure version', () => {
    const { efuses, registers } = chip();
    efuses.secureVersion = 3;
    const s = decodeEfuses(readingOf(registers, efuses));
    expect(s.mac).toBe(MAC.toLowerCase());
    expect(s.revision).toBe('v0.2');
    expect(s.secureBoot).toBe(false);
    expect(s.secureVersion).toBe(3);
    expect(s.keys.map((k) => [k.purpose, k.readable, k.writable])).toEqual([
      ['USER', true, true],
      ['USER', true, true],
      ['USER', true, true],
      ['HMAC_UP', false, false],
      ['USER', true, true],
      ['USER', true, true],
    ]);
    expect(s.keys[3]!.value).toBeUndefined();
    expect(s.keys[0]!.value).toBe('00'.repeat(32));
    const text = formatSummary(s).join('\n');
    expect(text).toMatch(/^KEY_PURPOSE_3 \(BLOCK0\) +Purpose of Key3 += HMAC_UP \(0x8\) R\/-$/m);
    expect(text).toMatch(/^BLOCK_KEY3 \(BLOCK7\) +Purpose: HMAC_UP += (\?\? ){31}\?\? -\/-$/m);
    expect(text).toMatch(/^MAC \(BLOCK1\) +MAC address += 24:0a:c4:10:00:2a \(OK\) R\/W$/m);
    expect(text).toMatch(/^SECURE_VERSION \(BLOCK0\) +Secure version for anti-rollback += 3 R\/W$/m);
  });

  it('refuses a reading whose two accounts of the key purposes disagree, another chip, a register not read', () => {
    const { efuses, registers } = chip();
    const reading = readingOf(registers, efuses);
    const disagreeing = { ...reading, security: { ...reading.security, keyPurposes: [8, 0, 0, 0, 0, 0, 0] } };
    expect(() => decodeEfuses(disagreeing)).toThrow(EfuseSummaryError);
    expect(() => decodeEfuses(disagreeing)).toThrow(/BLOCK_KEY0: KEY_PURPOSE_0 reads USER but GET_SECURITY_INFO says HMAC_UP/);
    expect(() => decodeEfuses({ ...reading, chip: 'ESP32-C3' })).toThrow(/reads ESP32-S3 eFuses; the board is an ESP32-C3/);
    const partial = new Map(reading.registers);
    partial.delete(EFUSE_BLOCK0 + 8);
    expect(() => decodeEfuses({ ...reading, registers: partial })).toThrow(/register 0x60007034 was not read/);
  });

  it('refuses a bad MAC, key block, key length or manifest entry', () => {
    expect(() => new Efuses({ macAddress: '24:0A:C4:10:00', hmacKey: KEY, hmacKeyBlock: 3 })).toThrow(/not a MAC address/);
    expect(() => new Efuses({ macAddress: 'zz:0A:C4:10:00:2A', hmacKey: KEY, hmacKeyBlock: 3 })).toThrow(EfuseError);
    expect(() => new Efuses({ macAddress: MAC, hmacKey: KEY, hmacKeyBlock: 6 })).toThrow(/BLOCK_KEY0 to BLOCK_KEY5, not 6/);
    expect(() => new Efuses({ macAddress: MAC, hmacKey: KEY.subarray(0, 16), hmacKeyBlock: 3 })).toThrow(/holds 32 bytes, not 16/);
    const dir = mkdtempSync(join(tmpdir(), 'efuse-manifest-'));
    try {
      writeFileSync(join(dir, 'manifest.json'), '{"defines":{"fuse":{"hmac_key":"3"}}}');
      expect(() => manifestHmacKeyBlock(pathToFileURL(join(dir, 'manifest.json')))).toThrow(/defines\.fuse\.hmac_key must be 0 to 5, not "3"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const { efuses } = chip();
    expect(() => (efuses.secureVersion = 17)).toThrow(/SECURE_VERSION counts 0 to 16, not 17/);
    expect(efuses.secureVersion).toBe(0);
  });
});

describe('which WR_DIS bit protects a field', () => {
  it('agrees with the WR_DIS.* fields of esp_efuse_table.csv for the fields the burns touch', () => {
    expect(wrDisBitOf('SECURE_BOOT_EN')).toBe(BLOCK0_FIELDS.WR_DIS_SECURE_BOOT_EN[0]);
    expect(wrDisBitOf('SECURE_VERSION')).toBe(18);
    expect([0, 1, 2].map((s) => wrDisBitOf(`SECURE_BOOT_KEY_REVOKE${s}` as 'SECURE_BOOT_KEY_REVOKE0'))).toEqual([5, 6, 7]);
    const [first, width] = BLOCK0_FIELDS.WR_DIS_KEY_PURPOSES;
    expect([0, 1, 2, 3, 4, 5].map((k) => wrDisBitOf(`KEY_PURPOSE_${k}` as 'KEY_PURPOSE_0'))).toEqual(Array.from({ length: width }, (_, k) => first + k));
  });

  it('refuses a field no WR_DIS bit protects (WR_DIS itself)', () => {
    expect(() => wrDisBitOf('WR_DIS_KEYS')).toThrow(/WR_DIS_KEYS has no WR_DIS bit/);
  });
});
