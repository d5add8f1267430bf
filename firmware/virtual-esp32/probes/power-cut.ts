// A power-cut trial's hook on the firmware's file system operations (SdkBoardOptions.onFlashOp,
// tools/power-cuts/sdk.ts): the answer the firmware's flash native waits for. The board cuts its own
// power when this says 'cut'.
import type { FlashOp } from '../board-options.ts';

/** -1 lets the operation happen, a count lets that many bytes of a write through, 'cut' cuts the power there. */
export function flashOpAnswer(op: string, path: string, length: number, decide: (op: FlashOp) => 'go' | 'cut' | number): number | 'cut' {
  if (op === 'cut') return 'cut';
  const answer = decide({ op: op as FlashOp['op'], path: path.replace(/^\/proc\/self\/cwd(?=\/)/, ''), length });
  if (answer === 'go') return -1;
  if (answer === 'cut' || op !== 'write') return 'cut';
  return Math.max(0, Math.min(length, Math.floor(answer)));
}
