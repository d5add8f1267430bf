// Reads the text back from an SSD1306 frame (1,024 bytes, 8 pages of 128 columns, bit 0 the top row
// of a page) that the platform drew with its 6x8 font (firmware/src/platform/moddable/font/): the
// bench and the tests see a virtual board's screen as lines, as they see a real board's through its
// console mirror. A glyph is 9 rows tall, so its last row lies in the next line's first row: each
// cell is matched with the row the glyph above left there. A cell no glyph explains reads as "\u25a1".
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const FONT_DIR = fileURLToPath(new URL('../src/platform/moddable/font/', import.meta.url));
const FIRST = 0x20;
const LAST = 0x7e;
const CELL = 6;
const ROWS = 9;
const WIDTH = 128;
const LINES = 8;
const COLUMNS = Math.floor(WIDTH / CELL);

let glyphs: { ch: string; rows: number[] }[] | undefined;

function font(): { ch: string; rows: number[] }[] {
  if (glyphs) return glyphs;
  const bits = readFileSync(FONT_DIR + 'oled-6x8.bits');
  const stride = Math.ceil(((LAST - FIRST + 1) * CELL) / 8);
  glyphs = [];
  for (let code = FIRST; code <= LAST; code++) {
    const rows: number[] = [];
    for (let y = 0; y < ROWS; y++) {
      let row = 0;
      for (let x = 0; x < CELL; x++) {
        const sx = (code - FIRST) * CELL + x;
        if ((bits[y * stride + (sx >> 3)]! >> (7 - (sx & 7))) & 1) row |= 1 << x;
      }
      rows.push(row);
    }
    glyphs.push({ ch: String.fromCharCode(code), rows });
  }
  // Space first: an empty cell is a space, not some other blank glyph.
  glyphs.sort((a, b) => (a.ch === ' ' ? -1 : b.ch === ' ' ? 1 : 0));
  return glyphs;
}

function pixel(frame: Uint8Array, x: number, y: number): boolean {
  return ((frame[(y >> 3) * WIDTH + x]! >> (y & 7)) & 1) === 1;
}

export function framebufferText(frame: Uint8Array): string[] {
  if (frame.length !== (WIDTH * 64) / 8) throw new Error(`an SSD1306 frame is 1024 bytes, got ${frame.length}`);
  const table = font();
  const lines: string[] = [];
  let below = new Array<number>(COLUMNS).fill(0); // the 9th rows of the line above
  for (let line = 0; line < LINES; line++) {
    let text = '';
    const next = new Array<number>(COLUMNS).fill(0);
    for (let col = 0; col < COLUMNS; col++) {
      const seen: number[] = [];
      for (let y = 0; y < 8; y++) {
        let row = 0;
        for (let x = 0; x < CELL; x++) if (pixel(frame, col * CELL + x, line * 8 + y)) row |= 1 << x;
        seen.push(row);
      }
      // Glyphs that differ only in their 9th row (g and q): the next line's first row tells which.
      let nextRow0 = 0;
      if (line + 1 < LINES) for (let x = 0; x < CELL; x++) if (pixel(frame, col * CELL + x, line * 8 + 8)) nextRow0 |= 1 << x;
      const candidates = table.filter((g) => seen.every((row, y) => row === (y === 0 ? g.rows[0]! | below[col]! : g.rows[y])));
      const fitting = candidates.filter((g) => line + 1 >= LINES || (nextRow0 & g.rows[8]!) === g.rows[8]);
      const bits = (n: number) => n.toString(2).replace(/0/g, '').length;
      const match = (fitting.length ? fitting : candidates).sort((a, b) => bits(b.rows[8]!) - bits(a.rows[8]!))[0];
      text += match?.ch ?? '\u25a1';
      next[col] = match?.rows[8] ?? 0;
    }
    below = next;
    lines.push(text.replace(/ +$/, ''));
  }
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}
