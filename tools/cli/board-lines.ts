// One line per board while several work at once (`fleet flash --rig`): on a terminal the lines are
// redrawn in place (cursor up, clear line), at most every `intervalMs`; otherwise a plain line is
// printed only when a board's stage changes, so a log or CI output stays short and readable.
export class BoardLines {
  private readonly texts: string[];
  private readonly stages: string[];
  private drawn = false;
  private lastDraw = 0;

  constructor(
    private readonly labels: string[],
    private readonly out: { write(text: string): unknown; isTTY?: boolean },
    private readonly intervalMs = 100,
  ) {
    this.texts = labels.map(() => 'waiting');
    this.stages = labels.map(() => '');
  }

  private get width(): number {
    return Math.max(...this.labels.map((l) => l.length));
  }

  /** A board's stage (`writing`, `verified`, `failed: …`) and, while writing, the fraction done. */
  set(row: number, stage: string, fraction?: number): void {
    this.texts[row] = fraction === undefined ? stage : `${stage} ${bar(fraction)}`;
    if (!this.out.isTTY) {
      if (stage !== this.stages[row]) this.out.write(`${this.labels[row]!.padEnd(this.width)}  ${stage}\n`);
    } else if (stage !== this.stages[row] || performance.now() - this.lastDraw >= this.intervalMs) this.draw();
    this.stages[row] = stage;
  }

  /** The last state of every line (a terminal only: plain output has printed it already). */
  finish(): void {
    if (this.out.isTTY) this.draw();
  }

  private draw(): void {
    this.lastDraw = performance.now();
    const up = this.drawn ? `\x1b[${this.labels.length}A` : '';
    this.drawn = true;
    this.out.write(up + this.labels.map((l, i) => `\x1b[2K${l.padEnd(this.width)}  ${this.texts[i]}\n`).join(''));
  }
}

export function bar(fraction: number, width = 30): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%`;
}
