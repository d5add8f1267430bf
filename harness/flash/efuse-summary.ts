// `fleet efuse summary`'s reading of an ESP32-S3's eFuses, shaped like `espefuse summary`: which
// registers to read through the ROM (READ_REG), and what they say. The field layout is the chip
// module's (firmware/chip/esp32s3-efuse.ts, from ESP-IDF's esp_efuse_table.csv), the one the virtual
// chip's eFuse model is built on too, so a real board and a virtual one are read the same way.
import { block1Mac, block1Revision, EFUSE_BLOCK0, EFUSE_BLOCK1, EFUSE_KEY0, getField, KEY_BLOCKS, KEY_PURPOSES, popcount, type Block0Field } from '../../firmware/chip/esp32s3-efuse.ts';

/** Every register the summary reads: BLOCK0's six words, BLOCK1's first six, the key blocks. */
export function summaryRegisters(): number[] {
  const out: number[] = [];
  for (let i = 0; i < 6; i++) out.push(EFUSE_BLOCK0 + 4 * i, EFUSE_BLOCK1 + 4 * i);
  for (let k = 0; k < KEY_BLOCKS; k++) for (let w = 0; w < 8; w++) out.push(EFUSE_KEY0 + 0x20 * k + 4 * w);
  return out;
}

export interface EfuseReading {
  chip: string;
  registers: Map<number, number>;
  security: { flags: number; flashCryptCnt: number; keyPurposes: number[] };
}

export interface KeySummary {
  block: number;
  purpose: string;
  readable: boolean;
  writable: boolean;
  /** Hex of the 32 bytes, or undefined when read-protected. */
  value: string | undefined;
}

export interface EfuseSummary {
  mac: string;
  revision: string;
  secureBoot: boolean;
  revoked: boolean[];
  flashCryptCnt: number;
  downloadModeDisabled: boolean;
  securityDownload: boolean;
  secureVersion: number;
  keys: KeySummary[];
}

export class EfuseSummaryError extends Error {
  override name = 'EfuseSummaryError';
}

function purposeName(n: number): string {
  return KEY_PURPOSES[n] ?? `UNKNOWN (${n})`;
}

/** A register of the reading; one the reading lacks is an error (summaryRegisters lists what to read). */
function registerOf(r: EfuseReading, a: number): number {
  const v = r.registers.get(a);
  if (v === undefined) throw new EfuseSummaryError(`register 0x${a.toString(16)} was not read`);
  return v;
}

/** BLOCK0's six words as read. */
export function block0Words(r: EfuseReading): number[] {
  return Array.from({ length: 6 }, (_, i) => registerOf(r, EFUSE_BLOCK0 + 4 * i));
}

export function decodeEfuses(r: EfuseReading): EfuseSummary {
  if (r.chip !== 'ESP32-S3') throw new EfuseSummaryError(`fleet efuse summary reads ESP32-S3 eFuses; the board is an ${r.chip}`);
  const reg = (a: number) => registerOf(r, a);
  const b0 = block0Words(r);
  const f = (name: Block0Field) => getField(b0, name);
  const block1 = Array.from({ length: 6 }, (_, i) => reg(EFUSE_BLOCK1 + 4 * i));
  const mac = Array.from(block1Mac(block1), (b) => b.toString(16).padStart(2, '0')).join(':');
  const { major, minor } = block1Revision(block1);
  const rdDis = f('RD_DIS');
  const wrDisKeys = f('WR_DIS_KEYS');
  const keys: KeySummary[] = [];
  for (let k = 0; k < KEY_BLOCKS; k++) {
    const purpose = purposeName(f(`KEY_PURPOSE_${k}` as Block0Field));
    const fromRom = r.security.keyPurposes[k];
    // The ROM's GET_SECURITY_INFO and the purpose fields are two readings of the same fuses.
    if (fromRom !== undefined && purposeName(fromRom) !== purpose) throw new EfuseSummaryError(`BLOCK_KEY${k}: KEY_PURPOSE_${k} reads ${purpose} but GET_SECURITY_INFO says ${purposeName(fromRom)}`);
    const readable = ((rdDis >>> k) & 1) === 0;
    const words = Array.from({ length: 8 }, (_, w) => reg(EFUSE_KEY0 + 0x20 * k + 4 * w));
    const value = readable ? Buffer.concat(words.map((w) => Buffer.from([w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24]))).toString('hex') : undefined;
    keys.push({ block: k, purpose, readable, writable: ((wrDisKeys >>> k) & 1) === 0, value });
  }
  return {
    mac,
    revision: `v${major}.${minor}`,
    secureBoot: f('SECURE_BOOT_EN') === 1,
    revoked: [f('SECURE_BOOT_KEY_REVOKE0') === 1, f('SECURE_BOOT_KEY_REVOKE1') === 1, f('SECURE_BOOT_KEY_REVOKE2') === 1],
    flashCryptCnt: f('SPI_BOOT_CRYPT_CNT'),
    downloadModeDisabled: f('DIS_DOWNLOAD_MODE') === 1,
    securityDownload: f('ENABLE_SECURITY_DOWNLOAD') === 1,
    secureVersion: popcount(f('SECURE_VERSION')),
    keys,
  };
}

function row(name: string, description: string, value: string, access: string): string {
  return `${name.padEnd(34)} ${description.padEnd(44)} = ${value} ${access}`;
}

/** The summary as espefuse prints it: one row per field, `R/W`, `-/-` for a protected key. */
export function formatSummary(s: EfuseSummary): string[] {
  const flag = (b: boolean) => (b ? 'True' : 'False');
  const lines = [
    'EFUSE_NAME (Block) Description  = [Meaningful Value] [Readable/Not Readable] (Hex Value)',
    '-'.repeat(88),
    'Identity fuses:',
    row('MAC (BLOCK1)', 'MAC address', `${s.mac} (OK)`, 'R/W'),
    row('WAFER_VERSION (BLOCK1)', 'Chip revision', s.revision, 'R/W'),
    '',
    'Security fuses:',
    row('SPI_BOOT_CRYPT_CNT (BLOCK0)', 'Flash encryption (an odd number of bits set)', `${s.flashCryptCnt % 2 === 1 ? 'Enable' : 'Disable'} (0b${s.flashCryptCnt.toString(2).padStart(3, '0')})`, 'R/W'),
    ...s.revoked.map((r, i) => row(`SECURE_BOOT_KEY_REVOKE${i} (BLOCK0)`, `Revoke secure boot key ${i}`, flag(r), 'R/W')),
    ...s.keys.map((k) => row(`KEY_PURPOSE_${k.block} (BLOCK0)`, `Purpose of Key${k.block}`, `${k.purpose} (0x${KEY_PURPOSES.indexOf(k.purpose as never).toString(16)})`, k.writable ? 'R/W' : 'R/-')),
    row('SECURE_BOOT_EN (BLOCK0)', 'Set this bit to enable secure boot', flag(s.secureBoot), 'R/W'),
    row('DIS_DOWNLOAD_MODE (BLOCK0)', 'Disable UART download mode', flag(s.downloadModeDisabled), 'R/W'),
    row('ENABLE_SECURITY_DOWNLOAD (BLOCK0)', 'Enable secure download mode', flag(s.securityDownload), 'R/W'),
    row('SECURE_VERSION (BLOCK0)', 'Secure version for anti-rollback', String(s.secureVersion), 'R/W'),
    '',
    'Key blocks:',
    ...s.keys.map((k) =>
      row(`BLOCK_KEY${k.block} (BLOCK${k.block + 4})`, `Purpose: ${k.purpose}`, k.value ? k.value.replace(/(..)(?!$)/g, '$1 ') : Array.from({ length: 32 }, () => '??').join(' '), `${k.readable ? 'R' : '-'}/${k.writable ? 'W' : '-'}`),
    ),
  ];
  return lines;
}
