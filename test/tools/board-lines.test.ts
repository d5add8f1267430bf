// The per-board lines of `fleet flash --rig`: redrawn in place on a terminal (cursor up over the
// lines drawn, each line cleared), one plain line per change of stage otherwise.
import { describe, expect, it } from 'vitest';
import { BoardLines } from '../../tools/cli/board-lines.ts';

function sink(isTTY: boolean) {
  const writes: string[] = [];
  return { writes, out: { isTTY, write: (t: string) => writes.push(t) } };
}

describe('BoardLines', () => {
  it('on a terminal: draws every line, then moves up over them to redraw', () => {
    const { writes, out } = sink(true);
    const lines = new BoardLines(['a /dev/ttyUSB0', 'bb /dev/ttyUSB1'], out, 0);
    lines.set(0, 'connecting');
    lines.set(1, 'writing', 0.5);
    expect(writes[0]).toBe('\x1b[2Ka /dev/ttyUSB0   connecting\n\x1b[2Kbb /dev/ttyUSB1  waiting\n');
    expect(writes[1]).toBe(`\x1b[2A\x1b[2Ka /dev/ttyUSB0   connecting\n\x1b[2Kbb /dev/ttyUSB1  writing [${'#'.repeat(15)}${' '.repeat(15)}]  50%\n`);
    lines.finish();
    expect(writes).toHaveLength(3);
  });

  it('on a terminal: progress within a stage is redrawn at most every interval', () => {
    const { writes, out } = sink(true);
    const lines = new BoardLines(['a'], out, 60_000);
    lines.set(0, 'writing', 0.1);
    lines.set(0, 'writing', 0.2);
    lines.set(0, 'writing', 0.3);
    expect(writes).toHaveLength(1);
    lines.set(0, 'verified');
    expect(writes).toHaveLength(2);
  });

  it('not a terminal: one plain line per change of stage, no escapes', () => {
    const { writes, out } = sink(false);
    const lines = new BoardLines(['a', 'bb'], out);
    lines.set(0, 'writing', 0.1);
    lines.set(0, 'writing', 0.9);
    lines.set(1, 'failed: cannot open /dev/ttyUSB1');
    lines.set(0, 'booted 2026.10.01');
    lines.finish();
    expect(writes.join('')).toBe('a   writing\nbb  failed: cannot open /dev/ttyUSB1\na   booted 2026.10.01\n');
  });
});
