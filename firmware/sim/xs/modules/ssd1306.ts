// The SSD1306 driver (modules/drivers/ssd1306: ssd1306.js, modSsd1306.c; 128x64 over I2C from the
// manifest's defines): a PixelsOut taking gray256 pixels only, full-screen updates, a pixel lit when
// its value is >= 128. The panel is the host's: each frame goes over as 1,024 bytes in the SSD1306's
// page layout (8 pages of 128 columns, bit 0 the top row of a page).
import Bitmap from './commodetto/Bitmap.ts';
import PixelsOut from './commodetto/PixelsOut.ts';
import { bytesOf, hostCall } from '../host.ts';

const WIDTH = 128;
const HEIGHT = 64;

export default class SSD1306 extends PixelsOut {
  constructor(dictionary: { pixelFormat?: number; address?: number; sda?: number; scl?: number }) {
    const pixelFormat = dictionary?.pixelFormat ?? Bitmap.Gray256;
    if (pixelFormat !== Bitmap.Gray256) throw new Error('unsupported pixelFormat');
    super({ width: WIDTH, height: HEIGHT, pixelFormat });
    hostCall('display.init', { width: WIDTH, height: HEIGHT }); // throws when no panel answers on I2C
  }

  override adaptInvalid(area: { x: number; y: number; w: number; h: number }): void {
    area.x = 0;
    area.y = 0;
    area.w = WIDTH;
    area.h = HEIGHT;
  }

  override send(pixels: ArrayBuffer, offset = 0, count?: number): void {
    const gray = bytesOf(pixels).subarray(offset, offset + (count ?? WIDTH * HEIGHT));
    if (gray.length !== WIDTH * HEIGHT) throw new Error('the emulated SSD1306 takes full frames'); //@@
    const pages = new Uint8Array((WIDTH * HEIGHT) / 8);
    for (let y = 0; y < HEIGHT; y++) {
      for (let x = 0; x < WIDTH; x++) if (gray[y * WIDTH + x]! >= 128) pages[(y >> 3) * WIDTH + x]! |= 1 << (y & 7);
    }
    hostCall('display.frame', {}, pages);
  }

  close(): void {}
}
