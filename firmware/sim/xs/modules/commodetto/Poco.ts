// Commodetto's Poco renderer (documentation/commodetto/poco.md), the part the firmware draws with:
// new Poco(pixelsOut, {pixels, displayListLength}), begin(x, y, w, h) ... end() (one frame),
// makeColor(r, g, b) in the display's pixel format, fillRectangle, drawText(text, font, color, x, y)
// with a BMFont whose page is a Monochrome bitmap (lit bits drawn in `color`), clip/origin.
// //@@ The emulation renders the whole frame at end() into one buffer instead of strips of
// `pixels` pixels (the display list is not bounded by displayListLength); a frame is sent to the
// PixelsOut in one piece.
import Bitmap from './Bitmap.ts';
import { glyphOf, type BmfFont } from './parseBMF.ts';
import type PixelsOut from './PixelsOut.ts';

export default class Poco {
  readonly width: number;
  readonly height: number;
  readonly #out: PixelsOut;
  #frame: Uint8Array;
  #area: { x: number; y: number; w: number; h: number } | undefined;

  constructor(pixelsOut: PixelsOut, _options: { pixels?: number; displayListLength?: number } = {}) {
    if (pixelsOut.pixelFormat !== Bitmap.Gray256) throw new Error('the emulated Poco draws Gray256 only'); //@@
    this.#out = pixelsOut;
    this.width = pixelsOut.width;
    this.height = pixelsOut.height;
    this.#frame = new Uint8Array(this.width * this.height);
  }

  makeColor(r: number, g: number, b: number): number {
    return Math.round((r * 77 + g * 151 + b * 28) / 256); // gray256: luma
  }

  begin(x = 0, y = 0, w = this.width, h = this.height): void {
    if (this.#area) throw new Error('Poco: begin inside begin');
    this.#area = { x, y, w, h };
  }

  fillRectangle(color: number, x: number, y: number, w: number, h: number): void {
    const area = this.#drawing();
    const x0 = Math.max(x, area.x);
    const y0 = Math.max(y, area.y);
    const x1 = Math.min(x + w, area.x + area.w);
    const y1 = Math.min(y + h, area.y + area.h);
    for (let row = y0; row < y1; row++) this.#frame.fill(color, row * this.width + x0, row * this.width + Math.max(x0, x1));
  }

  drawText(text: string, font: BmfFont, color: number, x: number, y: number): void {
    const area = this.#drawing();
    const page = font.bitmap as Bitmap | undefined;
    if (!page || page.pixelFormat !== Bitmap.Monochrome) throw new Error('Poco: the font needs a Monochrome bitmap');
    const bits = new Uint8Array(page.buffer, page.offset);
    const stride = Math.ceil(page.width / 8);
    for (const ch of text) {
      const glyph = glyphOf(font, ch.codePointAt(0)!);
      if (!glyph) continue; // Poco skips characters the font lacks
      for (let gy = 0; gy < glyph.height; gy++) {
        const py = y + glyph.yoffset + gy;
        if (py < area.y || py >= area.y + area.h) continue;
        for (let gx = 0; gx < glyph.width; gx++) {
          const px = x + glyph.xoffset + gx;
          if (px < area.x || px >= area.x + area.w) continue;
          const sx = glyph.x + gx;
          const on = (bits[(glyph.y + gy) * stride + (sx >> 3)]! >> (7 - (sx & 7))) & 1;
          if (on) this.#frame[py * this.width + px] = color;
        }
      }
      x += glyph.advance;
    }
  }

  end(): void {
    const area = this.#drawing();
    this.#area = undefined;
    this.#out.begin(area.x, area.y, area.w, area.h);
    this.#out.send(this.#frame.buffer as ArrayBuffer, 0, this.#frame.byteLength);
    this.#out.end();
  }

  #drawing(): { x: number; y: number; w: number; h: number } {
    if (!this.#area) throw new Error('Poco: draw outside begin/end');
    return this.#area;
  }
}
