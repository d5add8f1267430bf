// `fleet monitor` colours lines by what they are: ESP-IDF log letters, the ROM banner, and the
// console protocol's line kinds (docs/serial-console.md).
import { describe, expect, it } from 'vitest';
import { colourLine, colourOf } from '../../harness/console-colours.ts';

describe('console colours', () => {
  it.each([
    ['E (12) esp_image: Image hash failed - image is corrupt', 'red'],
    ['LOG ERROR backup: push failed', 'red'],
    ['ERR usage usage: cloud <http(s) URL> | cloud none', 'red'],
    ['HOST firmware fault (stack overflow): watchdog reset', 'red'],
    ['W (3) boot: otadata[1] (ota_seq 2, slot 1) is still PENDING_VERIFY', 'yellow'],
    ['LOG WARNING provisioning: station 02:00:00:C0:08:00 not in the allowlist', 'yellow'],
    ['I (10) app_init: App version:      2026.01.01', 'green'],
    ['OK {"rebooting":true}', 'green'],
    ['rst:0x1 (POWERON),boot:0x8 (SPI_FAST_FLASH_BOOT)', 'dim'],
    ['ESP-ROM:esp32s3-20210327', 'dim'],
    ['EVT {"event":"target_provisioning","kind":"no_ap"}', 'cyan'],
    ['OLED ["Controller"]', 'blue'],
    ['HOST ethernet: listening on 127.0.0.2:4000', 'magenta'],
    ['LOG INFO boot: controller u-1 firmware 2026.01.01 (debug)', null],
  ])('%s is %s', (line, colour) => {
    expect(colourOf(line)).toBe(colour);
  });

  it('wraps a coloured line in an SGR sequence and leaves the others as they are', () => {
    expect(colourLine('ERR x y')).toBe('\x1b[31mERR x y\x1b[0m');
    expect(colourLine('plain')).toBe('plain');
  });
});
