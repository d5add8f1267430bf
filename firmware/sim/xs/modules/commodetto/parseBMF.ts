// Commodetto's parseBMF (modules/commodetto/commodettoParseBMF.js + cfeBMF.c): reads a BMFont binary,
// version 3 (AngelCode): blocks 1 info, 2 common (lineHeight, base), 3 pages, 4 chars (20 bytes
// each: id, x, y, width, height, xoffset, yoffset, xadvance, page, channel). The caller attaches
// the page as `font.bitmap`. Anything else throws, as the SDK's does.
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
  glyphs: Map<number, BmfGlyph>;
  bitmap?: unknown;
}

export default function parseBMF(buffer: ArrayBuffer): BmfFont {
  const view = new DataView(buffer);
  if (view.byteLength < 4 || view.getUint8(0) !== 0x42 || view.getUint8(1) !== 0x4d || view.getUint8(2) !== 0x46) throw new Error('parseBMF: not a BMFont binary');
  if (view.getUint8(3) !== 3) throw new Error('parseBMF: version 3 only');
  const font: BmfFont = { height: 0, ascent: 0, glyphs: new Map() };
  let at = 4;
  while (at + 5 <= view.byteLength) {
    const type = view.getUint8(at);
    const size = view.getUint32(at + 1, true);
    const body = at + 5;
    if (type === 2) {
      font.height = view.getUint16(body, true);
      font.ascent = view.getUint16(body + 2, true);
    } else if (type === 4) {
      for (let c = body; c + 20 <= body + size; c += 20) {
        font.glyphs.set(view.getUint32(c, true), {
          x: view.getUint16(c + 4, true),
          y: view.getUint16(c + 6, true),
          width: view.getUint16(c + 8, true),
          height: view.getUint16(c + 10, true),
          xoffset: view.getInt16(c + 12, true),
          yoffset: view.getInt16(c + 14, true),
          advance: view.getInt16(c + 16, true),
        });
      }
    }
    at = body + size;
  }
  if (font.glyphs.size === 0) throw new Error('parseBMF: no characters');
  return font;
}
