// `fleet flash --rig rig.json <inputs…>`: every board of the rig that has a port, flashed at once
// (harness/flash/flash-rig.ts), one line per board while it works, then a summary table on stdout.
// Exit 0 when every board was written, verified (and booted, unless --no-reset); 11 when any failed,
// the table naming it and why; 4 for a rig without ports or an unknown --board, as for any wrong rig.
import { resolve } from 'node:path';
import { BoardLines } from '../cli/board-lines.ts';
import type { FlashPlan } from '../../harness/flash/inputs.ts';
import type { PartitionEntry } from '../../firmware/image/partition-table.ts';

export interface RigFlashCommandOptions {
  rig: string;
  board?: string[];
  baud: number;
  eraseAll?: boolean;
  compress: boolean;
  force?: boolean;
  reset: boolean;
  bootTimeout: number;
}

export async function flashRigCommand(plan: FlashPlan, productTable: PartitionEntry[], o: RigFlashCommandOptions): Promise<number> {
  const [{ flashRig, rigSummary, rigTargets }, { loadRig }] = await Promise.all([import('../../harness/flash/flash-rig.ts'), import('../../harness/rig.ts')]);
  const { FLASH_EXIT } = await import('../../harness/flash/flash-board.ts');
  const rig = loadRig(resolve(o.rig));
  const targets = rigTargets(rig, o.board);
  process.stderr.write(`flash: rig ${rig.name}, ${targets.length} boards at once at ${o.baud} baud${o.force ? ', every block written (--force)' : ''}\n`);
  const lines = new BoardLines(targets.map((t) => `${t.id} ${t.port}`), process.stderr);
  const results = await flashRig(targets, {
    plan,
    productTable,
    baudRate: o.baud,
    eraseAll: o.eraseAll === true,
    compress: o.compress,
    force: o.force === true,
    reset: o.reset !== false,
    bootTimeoutMs: o.bootTimeout * 1000,
    onState: (i, s) => lines.set(i, s.stage, s.fraction),
  });
  lines.finish();
  process.stdout.write(rigSummary(results) + '\n');
  const failed = results.filter((r) => r.error);
  process.stdout.write(failed.length ? `flashed ${results.length - failed.length} of ${results.length} boards; failed: ${failed.map((r) => r.target.id).join(', ')}\n` : `flashed ${results.length} of ${results.length} boards\n`);
  return failed.length ? FLASH_EXIT.rig : 0;
}
