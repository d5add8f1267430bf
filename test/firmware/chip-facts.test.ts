// The ESP32-S3's facts in the chip module (firmware/chip/): the interface MACs ESP-IDF derives from
// the base MAC, and BLOCK1 as the factory burns it and as the tools read it back.
import { describe, expect, it } from 'vitest';
import { block1Mac, block1Revision, block1Words } from '../../firmware/chip/esp32s3-efuse.ts';
import { interfaceMac, macBytes, macString, softApMac } from '../../firmware/chip/esp32s3-mac.ts';

describe('interface MACs (ESP-IDF, four universal addresses)', () => {
  it('adds 0, 1, 2 and 3 to the final octet of the base MAC', () => {
    const base = '24:0A:C4:10:31:40';
    expect(['station', 'softAp', 'bluetooth', 'ethernet'].map((i) => interfaceMac(base, i as 'station'))).toEqual(['24:0A:C4:10:31:40', '24:0A:C4:10:31:41', '24:0A:C4:10:31:42', '24:0A:C4:10:31:43']);
    expect(softApMac(base)).toBe('24:0A:C4:10:31:41');
  });

  it('wraps the final octet without carrying into the one before it', () => {
    expect(softApMac('24:0a:c4:10:31:ff')).toBe('24:0A:C4:10:31:00');
    expect(interfaceMac('24:0A:C4:10:31:FE', 'ethernet')).toBe('24:0A:C4:10:31:01');
  });

  it('refuses what is not a MAC address, naming it', () => {
    expect(() => macBytes('24:0A:C4:10:31')).toThrow(/not a MAC address: "24:0A:C4:10:31"/);
    expect(() => softApMac('24:0A:C4:10:31:GG')).toThrow(/not a MAC address/);
    expect(macString(macBytes('aa:bb:cc:dd:ee:0f'))).toBe('AA:BB:CC:DD:EE:0F');
  });
});

describe('BLOCK1: MAC and chip revision', () => {
  it('reads back what the factory burns, for revisions whose minor needs its high bit', () => {
    const mac = macBytes('24:0A:C4:10:31:07');
    for (const revision of [{ major: 0, minor: 2 }, { major: 1, minor: 9 }, { major: 3, minor: 15 }]) {
      const words = block1Words(mac, revision);
      expect(words).toHaveLength(6);
      expect(macString(block1Mac(words))).toBe('24:0A:C4:10:31:07');
      expect(block1Revision(words)).toEqual(revision);
    }
  });

  it('lays the MAC out as espefuse reads it: word 0 holds bytes 2..5, word 1 bytes 0..1', () => {
    const words = block1Words(macBytes('01:02:03:04:05:06'), { major: 0, minor: 2 });
    expect(words[0]).toBe(0x03040506);
    expect(words[1]).toBe(0x0102);
    // WAFER_VERSION_MINOR_LO (2) at [20:18] and BLK_VERSION_MINOR (1) at [26:24] of word 3.
    expect(words[3]).toBe(((2 << 18) | (1 << 24)) >>> 0);
  });
});
