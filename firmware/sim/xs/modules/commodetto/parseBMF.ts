// Commodetto's parseBMF (modules/commodetto/commodettoParseBMF.js: `function parse() @
// "xs_parseBMF"`, native): reads a BMFont binary, version 3 (AngelCode): blocks 1 info, 2 common
// (lineHeight, base), 3 pages, 4 chars (20 bytes each: id, x, y, width, height, xoffset, yoffset,
// xadvance, page, channel). The caller attaches the page as `font.bitmap`. Anything else throws, as
// the SDK's does.
// As on a board, the glyph metrics stay in the font's buffer (a resource, in flash) and the renderer
// looks them up there: the parsed font is a few properties, not an object per glyph (which would
// cost about a thousand slots of the heap that a board does not spend; docs/firmware-bench.md).
export interface BmfGlyph {
  x: number;
  y: number;
  width: number;
  height: number;
  xoffset: number;
  yoffset: number;
  advance: number;
}

export interface BmfFont {
  height: number;
  ascent: number;
  /** The font's buffer and where its chars block lies (what the native keeps). */
  readonly view: DataView;
  readonly chars: number;
  readonly count: number;
  bitmap?: unknown;
}

const CHAR_BYTES = 20;

export default function parseBMF(buffer: ArrayBuffer): BmfFont {
  const view = new DataView(buffer);
  if (view.byteLength < 4 || view.getUint8(0) !== 0x42 || view.getUint8(1) !== 0x4d || view.getUint8(2) !== 0x46) throw new Error('parseBMF: not a BMFont binary');
  if (view.getUint8(3) !== 3) throw new Error('parseBMF: version 3 only');
  let height = 0;
  let ascent = 0;
  let chars = 0;
  let count = 0;
  let at = 4;
  while (at + 5 <= view.byteLength) {
    const type = view.getUint8(at);
    const size = view.getUint32(at + 1, true);
    const body = at + 5;
    if (type === 2) {
      height = view.getUint16(body, true);
      ascent = view.getUint16(body + 2, true);
    } else if (type === 4) {
      chars = body;
      count = Math.floor(Math.min(size, view.byteLength - body) / CHAR_BYTES);
    }
    at = body + size;
  }
  if (count === 0) throw new Error('parseBMF: no characters');
  return { height, ascent, view, chars, count };
}

/** The metrics of a character, read from the font's chars block (as Poco's C does), or undefined. */
export function glyphOf(font: BmfFont, code: number): BmfGlyph | undefined {
  const { view, chars, count } = font;
  // A font of consecutive characters (this one: U+0020 to U+007E) has the code's entry at its
  // distance from the first; otherwise every entry is looked at.
  const direct = code - view.getUint32(chars, true);
  const guess = direct >= 0 && direct < count && view.getUint32(chars + direct * CHAR_BYTES, true) === code ? direct : -1;
  for (let i = guess >= 0 ? guess : 0; i < count; i++) {
    const c = chars + i * CHAR_BYTES;
    if (view.getUint32(c, true) !== code) continue;
    return {
      x: view.getUint16(c + 4, true),
      y: view.getUint16(c + 6, true),
      width: view.getUint16(c + 8, true),
      height: view.getUint16(c + 10, true),
      xoffset: view.getInt16(c + 12, true),
      yoffset: view.getInt16(c + 14, true),
      advance: view.getInt16(c + 16, true),
    };
  }
  return undefined;
}
