// The chips an image can be built for or described as: the image header's chip id
// (esp_chip_id_t in ESP-IDF's esp_app_format.h), where the second-stage bootloader lives, and the
// address ranges that tell a mapped flash segment (DROM/IROM, reached through the cache MMU) from
// one copied into RAM (soc.h of each target; esptool's MEMORY_MAP tables agree). The product's
// boards are ESP32-S3 (DESIGN.md section 7), but the chip stays a parameter, never a literal.

export type ChipName = 'esp32' | 'esp32s2' | 'esp32s3' | 'esp32c3' | 'esp32c6';

export interface MemoryRegion {
  name: 'DROM' | 'IROM' | 'DRAM' | 'IRAM' | 'RTC_IRAM' | 'RTC_DRAM' | 'RTC_DATA' | 'EXTRAM_DATA';
  start: number;
  /** Exclusive. */
  end: number;
}

export interface ChipSpec {
  name: ChipName;
  /** As esptool and the ROM banner spell it. */
  displayName: string;
  /** esp_image_header_t.chip_id. */
  imageChipId: number;
  /** Where the ROM finds the second-stage bootloader (ESP32 and ESP32-S2: 0x1000; the others: 0x0). */
  bootloaderOffset: number;
  memory: MemoryRegion[];
}

export const CHIPS: Record<ChipName, ChipSpec> = {
  esp32: {
    name: 'esp32',
    displayName: 'ESP32',
    imageChipId: 0x0000,
    bootloaderOffset: 0x1000,
    memory: [
      { name: 'DROM', start: 0x3f400000, end: 0x3f800000 },
      { name: 'EXTRAM_DATA', start: 0x3f800000, end: 0x3fc00000 },
      { name: 'RTC_DRAM', start: 0x3ff80000, end: 0x3ff82000 },
      { name: 'DRAM', start: 0x3ffae000, end: 0x40000000 },
      { name: 'IRAM', start: 0x40080000, end: 0x400a0000 },
      { name: 'RTC_IRAM', start: 0x400c0000, end: 0x400c2000 },
      { name: 'IROM', start: 0x400d0000, end: 0x40400000 },
      { name: 'RTC_DATA', start: 0x50000000, end: 0x50002000 },
    ],
  },
  esp32s2: {
    name: 'esp32s2',
    displayName: 'ESP32-S2',
    imageChipId: 0x0002,
    bootloaderOffset: 0x1000,
    memory: [
      { name: 'DROM', start: 0x3f000000, end: 0x3ff80000 },
      { name: 'DRAM', start: 0x3ffb0000, end: 0x40000000 },
      { name: 'IRAM', start: 0x40020000, end: 0x40070000 },
      { name: 'IROM', start: 0x40080000, end: 0x40b80000 },
      { name: 'RTC_DATA', start: 0x50000000, end: 0x50002000 },
    ],
  },
  esp32s3: {
    name: 'esp32s3',
    displayName: 'ESP32-S3',
    imageChipId: 0x0009,
    bootloaderOffset: 0x0,
    memory: [
      { name: 'DROM', start: 0x3c000000, end: 0x3d000000 },
      { name: 'EXTRAM_DATA', start: 0x3d000000, end: 0x3e000000 },
      { name: 'DRAM', start: 0x3fc88000, end: 0x3fd00000 },
      { name: 'IRAM', start: 0x40370000, end: 0x403e0000 },
      { name: 'IROM', start: 0x42000000, end: 0x44000000 },
      { name: 'RTC_DATA', start: 0x50000000, end: 0x50002000 },
      { name: 'RTC_IRAM', start: 0x600fe000, end: 0x60100000 },
    ],
  },
  esp32c3: {
    name: 'esp32c3',
    displayName: 'ESP32-C3',
    imageChipId: 0x0005,
    bootloaderOffset: 0x0,
    memory: [
      { name: 'DROM', start: 0x3c000000, end: 0x3c800000 },
      { name: 'DRAM', start: 0x3fc80000, end: 0x3fce0000 },
      { name: 'IRAM', start: 0x4037c000, end: 0x403e0000 },
      { name: 'IROM', start: 0x42000000, end: 0x42800000 },
      { name: 'RTC_IRAM', start: 0x50000000, end: 0x50002000 },
    ],
  },
  esp32c6: {
    name: 'esp32c6',
    displayName: 'ESP32-C6',
    imageChipId: 0x000d,
    bootloaderOffset: 0x0,
    memory: [
      { name: 'DRAM', start: 0x40800000, end: 0x40880000 },
      { name: 'IROM', start: 0x42000000, end: 0x42800000 },
      { name: 'DROM', start: 0x42800000, end: 0x43000000 },
      { name: 'RTC_IRAM', start: 0x50000000, end: 0x50004000 },
    ],
  },
};

export function chipByName(name: string): ChipSpec {
  const chip = (CHIPS as Record<string, ChipSpec | undefined>)[name];
  if (!chip) throw new RangeError(`unknown chip ${JSON.stringify(name)}: one of ${Object.keys(CHIPS).join(', ')}`);
  return chip;
}

/** The chip an image header names; undefined for ids this table does not know (e.g. ESP32-H2, -P4). */
export function chipById(id: number): ChipSpec | undefined {
  return Object.values(CHIPS).find((c) => c.imageChipId === id);
}

export function regionOf(chip: ChipSpec | undefined, address: number): MemoryRegion['name'] | undefined {
  return chip?.memory.find((r) => address >= r.start && address < r.end)?.name;
}

/** A segment the bootloader maps through the flash cache rather than copying (esp_image_format.c should_map). */
export function isMapped(chip: ChipSpec | undefined, address: number): boolean {
  const region = regionOf(chip, address);
  return region === 'DROM' || region === 'IROM' || region === 'EXTRAM_DATA';
}
