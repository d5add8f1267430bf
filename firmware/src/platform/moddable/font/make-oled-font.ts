// Generates the board's OLED font (hal/display.ts) from the glyphs the virtual OLED draws
// (js-pixel-fonts "Seven plus", harness/oled.ts), so a board and a virtual board show the same
// letters. Two files, both Moddable resources read in place from flash:
// - oled-6x8.bmf: a BMFont binary, version 3 (AngelCode's format, as Commodetto's cfeBMF.c reads
//   it: blocks 1-4, one page, 20-byte character records, bit 0x40 of the first record's channel
//   byte = "one continuous run of characters", a Moddable extension that makes lookups direct);
// - oled-6x8.bits: the page, a 1-bit atlas (Commodetto's Monochrome format: rows of
//   ceil(width / 8) bytes, most significant bit first, 1 = lit).
// Every printable ASCII character gets a 6x8 cell (advance 6: 21 characters on 128 pixels, 8 lines
// on 64); descenders keep their 9th row, which reaches into the next line as on the virtual OLED.
// Run from the repository root: npx tsx firmware/src/platform/moddable/font/make-oled-font.ts
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pixelFonts from 'js-pixel-fonts';

export const FIRST_CHAR = 0x20;
export const LAST_CHAR = 0x7e;
export const CELL_WIDTH = 6;
export const LINE_HEIGHT = 8;
export const BASELINE = 7;
export const ATLAS_HEIGHT = 9;
export const ATLAS_WIDTH = (LAST_CHAR - FIRST_CHAR + 1) * CELL_WIDTH;
export const PAGE_NAME = 'oled-6x8.bits';
const FONT_NAME = 'Seven plus 6x8';
const CONTINUOUS_RUN = 0x40;
const ALL_CHANNELS = 0x0f;

class LittleEndian {
  readonly bytes: number[] = [];
  u8(v: number): this {
    this.bytes.push(v & 0xff);
    return this;
  }
  u16(v: number): this {
    return this.u8(v).u8(v >> 8);
  }
  u32(v: number): this {
    return this.u16(v & 0xffff).u16(v >>> 16);
  }
  text(s: string): this {
    for (const c of Buffer.from(`${s}\0`, 'latin1')) this.u8(c);
    return this;
  }
  block(id: number, body: LittleEndian): this {
    this.u8(id).u32(body.bytes.length);
    this.bytes.push(...body.bytes);
    return this;
  }
}

export function buildOledFont(): { bmf: Uint8Array; bits: Uint8Array } {
  const glyphs = pixelFonts.fonts.sevenPlus.glyphs;
  const rowBytes = Math.ceil(ATLAS_WIDTH / 8);
  const bits = new Uint8Array(rowBytes * ATLAS_HEIGHT);
  const chars = new LittleEndian();
  for (let code = FIRST_CHAR; code <= LAST_CHAR; code++) {
    const index = code - FIRST_CHAR;
    const glyph = glyphs[String.fromCharCode(code)];
    if (!glyph) throw new Error(`the virtual OLED's font has no glyph for U+${code.toString(16)}`);
    const width = glyph.pixels[0]?.length ?? 0;
    if (width > CELL_WIDTH - 1 || glyph.offset + glyph.pixels.length > ATLAS_HEIGHT) throw new Error(`glyph U+${code.toString(16)} does not fit a ${CELL_WIDTH}x${ATLAS_HEIGHT} cell`);
    glyph.pixels.forEach((row, gy) =>
      row.forEach((on, gx) => {
        if (!on) return;
        const x = index * CELL_WIDTH + gx;
        const y = glyph.offset + gy;
        bits[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
      }),
    );
    // id, x, y, width, height, xoffset, yoffset, xadvance, page, channel
    chars.u32(code).u16(index * CELL_WIDTH).u16(0).u16(width).u16(ATLAS_HEIGHT).u16(0).u16(0).u16(CELL_WIDTH).u8(0);
    chars.u8(ALL_CHANNELS | (index === 0 ? CONTINUOUS_RUN : 0));
  }
  // info: size, bits (unicode), charset, stretchH, aa, padding x4, spacing x2, outline, name
  const info = new LittleEndian().u16(LINE_HEIGHT).u8(0x02).u8(0).u16(100).u8(1).u8(0).u8(0).u8(0).u8(0).u8(0).u8(0).u8(0).text(FONT_NAME);
  // common: lineHeight, base, scaleW, scaleH, pages, bits, alpha/red/green/blue channels
  const common = new LittleEndian().u16(LINE_HEIGHT).u16(BASELINE).u16(ATLAS_WIDTH).u16(ATLAS_HEIGHT).u16(1).u8(0).u8(0).u8(0).u8(0).u8(0);
  const bmf = new LittleEndian().u8(0x42).u8(0x4d).u8(0x46).u8(3);
  bmf.block(1, info).block(2, common).block(3, new LittleEndian().text(PAGE_NAME)).block(4, chars);
  return { bmf: Uint8Array.from(bmf.bytes), bits };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { bmf, bits } = buildOledFont();
  const here = new URL('.', import.meta.url);
  writeFileSync(new URL('oled-6x8.bmf', here), bmf);
  writeFileSync(new URL(PAGE_NAME, here), bits);
  console.log(`oled-6x8.bmf ${bmf.length} bytes, ${PAGE_NAME} ${bits.length} bytes (${ATLAS_WIDTH}x${ATLAS_HEIGHT})`);
}
