// The SSD1306 on a virtual board's I2C bus (address 0x3C), as the SDK's driver drives it
// (modules/drivers/ssd1306/modSsd1306.c): every I2C write starts with a control byte, 0x00 for
// commands (one command or argument a write, as its doCmd sends them) and 0x40 for GDDRAM data. The
// controller keeps 8 pages of 128 columns (bit 0 the top row of a page) and the addressing state
// the commands set (memory mode, column and page windows); a frame is complete when the data wraps
// from the window's last page back to its first, and then reaches the panel (its readback as text:
// oled-text.ts). Commands that change only the glass (contrast, charge pump, scan direction) are
// taken and kept, not rendered.
export const SSD1306_ADDRESS = 0x3c;

const WIDTH = 128;
const PAGES = 8;

/** How many argument bytes follow each command that takes some (SSD1306 datasheet, section 9). */
const ARGUMENTS: Record<number, number> = {
  0x20: 1, 0x21: 2, 0x22: 2, 0x26: 6, 0x27: 6, 0x29: 5, 0x2a: 5, 0x81: 1, 0x8d: 1, 0xa3: 2, 0xa8: 1, 0xd3: 1, 0xd5: 1, 0xd9: 1, 0xda: 1, 0xdb: 1,
};

export class Ssd1306 {
  readonly gddram = new Uint8Array(WIDTH * PAGES);
  displayOn = false;
  inverted = false;
  private mode = 2; // page addressing after reset
  private columnStart = 0;
  private columnEnd = WIDTH - 1;
  private pageStart = 0;
  private pageEnd = PAGES - 1;
  private column = 0;
  private page = 0;
  private command: number[] = [];

  constructor(private readonly onFrame: (frame: Uint8Array) => void) {}

  /** An I2C write addressed to the panel. */
  write(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    const control = bytes[0]!;
    const body = bytes.subarray(1);
    if (control & 0x40) this.data(body);
    else for (const b of body) this.commandByte(b);
  }

  private commandByte(b: number): void {
    this.command.push(b);
    const op = this.command[0]!;
    if (this.command.length - 1 < (ARGUMENTS[op] ?? 0)) return;
    const args = this.command.slice(1);
    this.command = [];
    if (op === 0xae || op === 0xaf) this.displayOn = op === 0xaf;
    else if (op === 0xa6 || op === 0xa7) this.inverted = op === 0xa7;
    else if (op === 0x20) this.mode = args[0]! & 3;
    else if (op === 0x21) {
      this.columnStart = args[0]! & 0x7f;
      this.columnEnd = args[1]! & 0x7f;
      this.column = this.columnStart;
    } else if (op === 0x22) {
      this.pageStart = args[0]! & 7;
      this.pageEnd = args[1]! & 7;
      this.page = this.pageStart;
    } else if (op >= 0xb0 && op <= 0xb7) this.page = op & 7;
    else if (op <= 0x0f) this.column = (this.column & 0xf0) | op;
    else if (op >= 0x10 && op <= 0x1f) this.column = ((op & 0x0f) << 4) | (this.column & 0x0f);
  }

  private data(bytes: Uint8Array): void {
    for (const b of bytes) {
      this.gddram[this.page * WIDTH + this.column] = b;
      if (this.mode === 2) {
        this.column = this.column === WIDTH - 1 ? 0 : this.column + 1;
        continue;
      }
      if (this.column < this.columnEnd) {
        this.column++;
        continue;
      }
      this.column = this.columnStart;
      if (this.page < this.pageEnd) this.page++;
      else {
        this.page = this.pageStart;
        this.onFrame(this.gddram.slice());
      }
    }
  }
}
