// The OLED as a picture: the lines a board shows, drawn on a 128x64 monochrome framebuffer with a
// 7-pixel font (js-pixel-fonts' "Seven plus"), 8 lines of 8 pixels, as the SSD1306 page layout, and
// encoded as PNG (scaled up so a person can read it in the report).
import pixelFonts from 'js-pixel-fonts';
import { PNG } from 'pngjs';

export const OLED_WIDTH = 128;
export const OLED_HEIGHT = 64;
const LINE_HEIGHT = 8;
const font = pixelFonts.fonts.sevenPlus;

/** 1 bit per pixel, row-major: what the panel would show. */
export function renderFramebuffer(lines: string[]): Uint8Array {
  const fb = new Uint8Array(OLED_WIDTH * OLED_HEIGHT);
  lines.slice(0, OLED_HEIGHT / LINE_HEIGHT).forEach((line, row) => {
    let x = 0;
    for (const ch of line) {
      const glyph = font.glyphs[ch] ?? font.glyphs['?'];
      if (!glyph) continue;
      const width = glyph.pixels[0]?.length ?? 3;
      if (x + width > OLED_WIDTH) break;
      glyph.pixels.forEach((pixelRow, gy) => {
        const y = row * LINE_HEIGHT + gy + glyph.offset;
        if (y < 0 || y >= OLED_HEIGHT) return;
        pixelRow.forEach((on, gx) => {
          if (on) fb[y * OLED_WIDTH + x + gx] = 1;
        });
      });
      x += width + 1;
    }
  });
  return fb;
}

/** PNG of the framebuffer, `scale` screen pixels per OLED pixel, light blue on black like the panel. */
export function renderPng(lines: string[], scale = 3): Buffer {
  const fb = renderFramebuffer(lines);
  const png = new PNG({ width: OLED_WIDTH * scale, height: OLED_HEIGHT * scale });
  for (let y = 0; y < OLED_HEIGHT * scale; y++) {
    for (let x = 0; x < OLED_WIDTH * scale; x++) {
      const on = fb[Math.floor(y / scale) * OLED_WIDTH + Math.floor(x / scale)] === 1;
      const i = (y * OLED_WIDTH * scale + x) * 4;
      png.data[i] = on ? 0x9f : 0x05;
      png.data[i + 1] = on ? 0xe8 : 0x08;
      png.data[i + 2] = on ? 0xff : 0x10;
      png.data[i + 3] = 0xff;
    }
  }
  return PNG.sync.write(png);
}
