// What @moddable/typings 5.6.0 lacks: the SSD1306 display driver. Mirrors
// modules/drivers/ssd1306/ssd1306.js and modSsd1306.c of the Moddable SDK (8.2.3). Width, height,
// I2C pins and address come from the manifest's `defines.ssd1306`; the dictionary is still required
// (the constructor reads `pixelFormat` from it, and only gray256 is accepted). It is a PixelsOut for
// Poco: full-screen updates (`adaptInvalid` widens every area), pixels >= 128 lit.
declare module 'ssd1306' {
  import PixelsOut from 'commodetto/PixelsOut';

  export default class SSD1306 extends PixelsOut {
    constructor(dictionary: { pixelFormat?: number; address?: number; sda?: number; scl?: number });
    close(): void;
  }
}
