// The partition table: firmware/partitions.csv compiled to ESP-IDF's binary format (32-byte
// entries, magic AA 50, the MD5 entry EB EB), read back as the bootloader reads it, and the checks
// gen_esp32part.py makes (overlaps, alignment, otadata, flash size).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PARTITIONS_CSV } from '../../firmware/image/product-partitions.ts';
import { parsePartitionCsv } from '../../firmware/image/partition-csv.ts';
import { compilePartitionTable, otaSlots, parsePartitionTable, PartitionTableError } from '../../firmware/image/partition-table.ts';

const csv = readFileSync(PARTITIONS_CSV, 'utf8');

/** The first entry as gen_esp32part.py writes it: nvs, data (0x01), nvs (0x02), 0x9000, 0x4000. */
const NVS_ENTRY = Buffer.from([
  0xaa, 0x50, // ESP_PARTITION_MAGIC, little-endian 0x50AA
  0x01, 0x02, // type data, subtype nvs
  0x00, 0x90, 0x00, 0x00, // offset 0x9000
  0x00, 0x40, 0x00, 0x00, // size 0x4000
  ...Buffer.from('nvs'), ...new Array(13).fill(0), // label[16]
  0x00, 0x00, 0x00, 0x00, // flags
]);

describe('the product partition table', () => {
  const entries = parsePartitionCsv(csv);

  it('has nvs, otadata, phy_init, two OTA slots and a LittleFS storage partition that ends at 8 MB', () => {
    expect(entries.map((p) => [p.name, p.type, p.subtype, p.offset, p.size])).toEqual([
      ['nvs', 0x01, 0x02, 0x9000, 0x4000],
      ['otadata', 0x01, 0x00, 0xd000, 0x2000],
      ['phy_init', 0x01, 0x01, 0xf000, 0x1000],
      ['ota_0', 0x00, 0x10, 0x10000, 0x300000],
      ['ota_1', 0x00, 0x11, 0x310000, 0x300000],
      ['storage', 0x01, 0x83, 0x610000, 0x1f0000],
    ]);
    expect(otaSlots(entries).map((p) => p.name)).toEqual(['ota_0', 'ota_1']);
  });

  it('compiles to 0xC00 bytes: entries, the MD5 entry over them, erased flash after', () => {
    const bin = compilePartitionTable(entries, 8 * 1024 * 1024);
    expect(bin.length).toBe(0xc00);
    expect(Buffer.from(bin.subarray(0, 32)).equals(NVS_ENTRY)).toBe(true);
    const md5At = entries.length * 32;
    expect([...bin.subarray(md5At, md5At + 16)]).toEqual([0xeb, 0xeb, ...new Array(14).fill(0xff)]);
    expect(Buffer.from(bin.subarray(md5At + 16, md5At + 32)).toString('hex')).toBe(createHash('md5').update(bin.subarray(0, md5At)).digest('hex'));
    expect(bin.subarray(md5At + 32).every((b) => b === 0xff)).toBe(true);
    expect(parsePartitionTable(bin)).toEqual({ entries, md5Checked: true });
  });

  it('refuses a table whose MD5 does not match, or whose entry magic is wrong', () => {
    const bin = compilePartitionTable(entries);
    const flipped = bin.slice();
    flipped[4 + 32 * 3] = flipped[4 + 32 * 3]! ^ 0x01; // ota_0's offset
    expect(() => parsePartitionTable(flipped)).toThrow('partition table MD5 mismatch');
    const badMagic = bin.slice();
    badMagic[32] = 0x00;
    expect(() => parsePartitionTable(badMagic)).toThrow(/partition entry 1 has bad magic/);
  });

  it('refuses overlaps (the old table had otadata over phy_init), misaligned apps, a table beyond the flash, no otadata', () => {
    const overlapping = parsePartitionCsv('nvs,data,nvs,0x9000,0x5000\notadata,data,ota,0xe000,0x2000\nphy_init,data,phy,0xf000,0x1000\n');
    expect(() => compilePartitionTable(overlapping)).toThrow(/partition phy_init at 0x0000f000 overlaps/);
    expect(() => compilePartitionTable(parsePartitionCsv('otadata,data,ota,0xd000,0x2000\nota_0,app,ota_0,0x11000,0x100000\n'))).toThrow(/ota_0 at 0x00011000 is not aligned to 0x00010000/);
    expect(() => compilePartitionTable(entries, 4 * 1024 * 1024)).toThrow(/ota_1 ends at 0x00610000, beyond the 4 MB flash/);
    expect(() => compilePartitionTable(parsePartitionCsv('ota_0,app,ota_0,0x10000,1M\nota_1,app,ota_1,,1M\n'))).toThrow(/need one otadata partition/);
  });

  it('reads the CSV forms ESP-IDF accepts: names or numbers, K/M sizes, empty offsets, flags', () => {
    const t = parsePartitionCsv('# comment\nnvs, data, nvs, , 24K\nphy_init, data, phy, , 4K\nfactory, app, factory, , 1M\nkeys, data, 0x40, , 4K, encrypted:readonly\n');
    expect(t.map((p) => [p.name, p.subtype, p.offset, p.size, p.flags])).toEqual([
      ['nvs', 0x02, 0x9000, 0x6000, 0],
      ['phy_init', 0x01, 0xf000, 0x1000, 0],
      ['factory', 0x00, 0x10000, 0x100000, 0],
      ['keys', 0x40, 0x110000, 0x1000, 3],
    ]);
    expect(() => parsePartitionCsv('x, data, nope, , 4K')).toThrow(PartitionTableError);
  });
});
