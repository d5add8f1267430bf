// The console output of a chip starting: the ROM's banner, then ESP-IDF log lines
// ("I (27) boot: …": level letter, milliseconds since reset, tag), as esp_log prints them without
// colours. What a bench tester reads on the serial console when a board boots, refuses an image or
// rolls back.

export type ResetReason = 'poweron' | 'software' | 'panic' | 'watchdog';

/** The ROM's reset cause line: code and name as the ESP32-S3 ROM prints them (RESET_REASON_* in the TRM). */
const RESET_CAUSE: Record<ResetReason, string> = {
  poweron: '0x1 (POWERON)',
  software: '0xc (RTC_SW_CPU_RST)',
  panic: '0x3 (RTC_SW_SYS_RST)',
  watchdog: '0x7 (TG0WDT_SYS_RST)',
};

/** The strapping-pin boot mode the ROM reports: GPIO0 high boots from flash, low waits for download. */
export const BOOT_MODE = {
  flash: '0x8 (SPI_FAST_FLASH_BOOT)',
  download: '0x0 (DOWNLOAD(USB/UART0))',
} as const;

export class BootLog {
  private readonly t0 = performance.now();

  constructor(private readonly write: (line: string) => void) {}

  private at(): number {
    return Math.round(performance.now() - this.t0);
  }

  /** A line without a log prefix (the ROM prints these). */
  raw(line: string): void {
    this.write(line);
  }

  info(tag: string, message: string): void {
    this.write(`I (${this.at()}) ${tag}: ${message}`);
  }

  warn(tag: string, message: string): void {
    this.write(`W (${this.at()}) ${tag}: ${message}`);
  }

  error(tag: string, message: string): void {
    this.write(`E (${this.at()}) ${tag}: ${message}`);
  }

  /** The first lines the ROM prints after a reset (ESP32-S3 ROM, build 2021-03-27). */
  romBanner(reset: ResetReason, mode: keyof typeof BOOT_MODE): void {
    this.raw('ESP-ROM:esp32s3-20210327');
    this.raw('Build:Mar 27 2021');
    this.raw(`rst:${RESET_CAUSE[reset]},boot:${BOOT_MODE[mode]}`);
  }
}
