// How long the virtual chip's SPI NOR flash takes to program and erase: the GigaDevice GD25Q64C the
// virtual ROM names (JEDEC 0xC8 0x4017, rom/ SPI flash id). The firmware's process waits this long for
// each write it makes, as the CPU of a board waits for its flash (firmware/sdk-host/natives/
// fw_host_flash_time.c); docs/virtual-flash-timing.md has the figures' source and what they cost.

export interface FlashTiming {
  /** Programming one 256-byte page (tPP). */
  pageProgramUs: number;
  /** Erasing one 4 KB sector (tSE). */
  sectorEraseUs: number;
}

/** The datasheet's typical times (GD25Q64C, section "AC characteristics"). */
export const GD25Q64C_TYPICAL: Readonly<FlashTiming> = Object.freeze({ pageProgramUs: 600, sectorEraseUs: 50_000 });
/** Its maximum times: a worn part, or the worst case a bench may choose to try. */
export const GD25Q64C_MAXIMUM: Readonly<FlashTiming> = Object.freeze({ pageProgramUs: 2_400, sectorEraseUs: 400_000 });

/** `typical` (the default), `maximum`, `off` (host speed, for a test that needs speed), or figures of another part. */
export type FlashTimingOption = 'typical' | 'maximum' | 'off' | FlashTiming;

export function flashTimingOf(option: FlashTimingOption = 'typical'): FlashTiming | undefined {
  if (option === 'off') return undefined;
  if (option === 'typical') return GD25Q64C_TYPICAL;
  if (option === 'maximum') return GD25Q64C_MAXIMUM;
  for (const [name, value] of Object.entries(option)) {
    if (!Number.isFinite(value) || value < 0) throw new Error(`flash timing ${name} must be a number of microseconds, not ${JSON.stringify(value)}`);
  }
  return option;
}

/** The firmware process's environment for it (unset: the flash takes no time). */
export function flashTimingEnv(timing: FlashTiming | undefined): Record<string, string> {
  return timing ? { FW_HOST_FLASH_TIMING: `${timing.pageProgramUs},${timing.sectorEraseUs}` } : {};
}

/** What writing `bytes` costs, in seconds: each byte programmed into a sector erased before it. */
export function writeSeconds(timing: FlashTiming, bytes: number): number {
  return (bytes * (timing.pageProgramUs / 256 + timing.sectorEraseUs / 4096)) / 1e6;
}
