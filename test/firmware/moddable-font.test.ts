// The board's OLED font (firmware/src/platform/moddable/font): generated from the glyphs the virtual
// OLED draws (harness/oled.ts, js-pixel-fonts "Seven plus"), in the BMFont v3 layout Commodetto's
// cfeBMF.c reads, with a 1-bit atlas in Commodetto's Monochrome layout. The checked-in files must be
// what the generator makes, and each glyph in them must be the virtual OLED's.
import { readFileSync } from 'node:fs';
import pixelFonts from 'js-pixel-fonts';
import { describe, expect, it } from 'vitest';
import { ATLAS_HEIGHT, ATLAS_WIDTH, buildOledFont, CELL_WIDTH, FIRST_CHAR, LAST_CHAR, LINE_HEIGHT, PAGE_NAME } from '../../firmware/src/platform/moddable/font/make-oled-font.ts';

const DIR = 'firmware/src/platform/moddable';
const bmf = new Uint8Array(readFileSync(`${DIR}/font/oled-6x8.bmf`));
const bits = new Uint8Array(readFileSync(`${DIR}/font/${PAGE_NAME}`));
const view = new DataView(bmf.buffer, bmf.byteOffset, bmf.byteLength);

/** The blocks as cfeBMF.c walks them: id byte, 32-bit little-endian size, content. */
function blocks(): Map<number, { at: number; size: number }> {
  const out = new Map<number, { at: number; size: number }>();
  for (let at = 4; at < bmf.length; ) {
    const id = bmf[at]!;
    const size = view.getUint32(at + 1, true);
    out.set(id, { at: at + 5, size });
    at += 5 + size;
  }
  return out;
}

describe('the OLED font resources', () => {
  it('are exactly what font/make-oled-font.ts generates', () => {
    const built = buildOledFont();
    expect(bmf).toEqual(built.bmf);
    expect(bits).toEqual(built.bits);
  });

  it('are a BMFont v3 with one page, a 6x8 cell and one continuous run of printable ASCII', () => {
    expect([...bmf.subarray(0, 4)]).toEqual([0x42, 0x4d, 0x46, 3]);
    const b = blocks();
    expect([...b.keys()]).toEqual([1, 2, 3, 4]);
    const common = b.get(2)!;
    expect([view.getUint16(common.at, true), view.getUint16(common.at + 4, true), view.getUint16(common.at + 6, true), view.getUint16(common.at + 8, true)]).toEqual([LINE_HEIGHT, ATLAS_WIDTH, ATLAS_HEIGHT, 1]);
    const chars = b.get(4)!;
    expect(chars.size).toBe(20 * (LAST_CHAR - FIRST_CHAR + 1));
    expect(bmf[chars.at + 19]! & 0x40).toBe(0x40); // cfeBMF.c: isContinuous
    for (let i = 0; i <= LAST_CHAR - FIRST_CHAR; i++) {
      const at = chars.at + 20 * i;
      expect(view.getUint32(at, true)).toBe(FIRST_CHAR + i);
      expect(view.getUint16(at + 16, true)).toBe(CELL_WIDTH); // advance: 21 columns on 128 pixels
    }
    expect(21 * CELL_WIDTH).toBeLessThanOrEqual(128);
    expect(8 * LINE_HEIGHT).toBe(64);
  });

  it('draw each glyph as the virtual OLED does', () => {
    const rowBytes = Math.ceil(ATLAS_WIDTH / 8);
    const lit = (x: number, y: number) => (bits[y * rowBytes + (x >> 3)]! & (0x80 >> (x & 7))) !== 0;
    for (let code = FIRST_CHAR; code <= LAST_CHAR; code++) {
      const glyph = pixelFonts.fonts.sevenPlus.glyphs[String.fromCharCode(code)]!;
      const x0 = (code - FIRST_CHAR) * CELL_WIDTH;
      for (let y = 0; y < ATLAS_HEIGHT; y++) {
        for (let x = 0; x < CELL_WIDTH; x++) {
          const row = glyph.pixels[y - glyph.offset];
          expect(lit(x0 + x, y), `${String.fromCharCode(code)} (${x},${y})`).toBe(row?.[x] === 1);
        }
      }
    }
  });

  it('match the atlas size the display module gives Commodetto', () => {
    const display = readFileSync(`${DIR}/hal/display.ts`, 'utf8');
    expect(display).toContain(`FONT_ATLAS_WIDTH = ${ATLAS_WIDTH};`);
    expect(display).toContain(`FONT_ATLAS_HEIGHT = ${ATLAS_HEIGHT};`);
    expect(display).toContain(`new Resource('${PAGE_NAME}')`);
  });
});
