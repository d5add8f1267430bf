// Every board of a rig flashed at once (`fleet flash --rig`, `fleet bench --flash`): one connection
// per port, each board on its own flashBoard run, so the boards' lines are busy together and the rig
// takes about as long as its slowest board. One board failing ends only its own run; the result of
// each is kept for the summary (docs/rig-flashing.md).
import { PacedLine } from '../../firmware/chip/uart.ts';
import type { PartitionEntry } from '../../firmware/image/partition-table.ts';
import { RigError, type BoardSpec, type RigSpec } from '../rig.ts';
import { createTransport } from '../transport/open.ts';
import type { ResetMethod } from '../transport/reset-sequence.ts';
import { FlashError, flashBoard, type FlashBoardOptions, type FlashOutcome } from './flash-board.ts';
import type { FlashPlan } from './inputs.ts';

export interface RigFlashTarget {
  id: string;
  port: string;
  chip: BoardSpec['chip'];
  resetMethod: ResetMethod;
}

export interface RigFlashResult {
  target: RigFlashTarget;
  outcome?: FlashOutcome;
  /** Bytes sent to the chip (the image's, before compression) and skipped as unchanged. */
  bytesWritten: number;
  bytesSkipped: number;
  seconds: number;
  /** seconds / (bytesWritten × 10 / baud): 1 is the line rate; undefined when nothing was written. */
  lineRateRatio?: number;
  error?: string;
  exitCode: number;
}

/**
 * The boards of the rig that can be flashed: every board with a port (serial, rfc2217), or those
 * named. A virtual board has no port until `fleet virtual` starts it; a rig without ports is an error.
 */
export function rigTargets(rig: RigSpec, only?: string[]): RigFlashTarget[] {
  const unknown = (only ?? []).filter((id) => !rig.boards.some((b) => b.id === id));
  if (unknown.length) throw new RigError(`no board ${unknown.join(', ')} on rig ${rig.name} (its boards: ${rig.boards.map((b) => b.id).join(', ')})`);
  const chosen = rig.boards.filter((b) => !only || only.includes(b.id));
  const portless = chosen.filter((b) => !b.port);
  if (portless.length === chosen.length) {
    throw new RigError(`rig ${rig.name} has no board with a port to flash (virtual boards have none: start them with fleet virtual and name their rfc2217:// URLs in a rig of kind rfc2217 boards)`);
  }
  if (portless.length) throw new RigError(`board ${portless.map((b) => b.id).join(', ')} of rig ${rig.name} has no port (a virtual board): leave it out with --board, or give it a port`);
  return chosen.map((b) => ({ id: b.id, port: b.port!, chip: b.chip, resetMethod: b.resetMethod ?? 'classic' }));
}

export type RigFlashOptions = Omit<FlashBoardOptions, 'transport' | 'chip' | 'resetMethod' | 'progress' | 'log' | 'plan' | 'productTable'> & {
  plan: FlashPlan;
  productTable: PartitionEntry[];
  /** Per board: a stage (`connecting`, `writing`, `verified`, …) or a fraction of the bytes to write. */
  onState?: (index: number, state: { stage: string; fraction?: number }) => void;
};

/** Flashes every target at once; resolves when all have finished, one result per target, in order. */
export async function flashRig(targets: RigFlashTarget[], o: RigFlashOptions): Promise<RigFlashResult[]> {
  return Promise.all(targets.map((target, index) => flashOne(target, index, o)));
}

async function flashOne(target: RigFlashTarget, index: number, o: RigFlashOptions): Promise<RigFlashResult> {
  const started = performance.now();
  const state = (stage: string, fraction?: number) => o.onState?.(index, fraction === undefined ? { stage } : { stage, fraction });
  state('connecting');
  const transport = await createTransport(target.port);
  try {
    const outcome = await flashBoard({
      ...o,
      transport,
      chip: target.chip,
      resetMethod: target.resetMethod,
      // An image the chip already holds: said as such, not as a full bar.
      progress: (_f, _i, done, total) => (total === 0 ? state('unchanged, skipped') : state('writing', done / total)),
      log: (line) => {
        if (line === 'Stub running...') state('comparing');
      },
    });
    const bytesWritten = outcome.written.reduce((n, w) => n + w.regions.reduce((m, [, bytes]) => m + bytes, 0), 0);
    const bytesSkipped = outcome.written.reduce((n, w) => n + w.skippedBytes, 0);
    state(outcome.booted ? `booted ${outcome.booted.version}` : 'verified');
    return {
      target,
      outcome,
      bytesWritten,
      bytesSkipped,
      seconds: outcome.seconds,
      ...(bytesWritten > 0 ? { lineRateRatio: outcome.seconds / PacedLine.seconds(bytesWritten, o.baudRate) } : {}),
      exitCode: 0,
    };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    state(`failed: ${error.split('\n')[0]}`);
    return { target, bytesWritten: 0, bytesSkipped: 0, seconds: (performance.now() - started) / 1000, error, exitCode: err instanceof FlashError ? err.exitCode : 1 };
  } finally {
    await transport.disconnect().catch(() => undefined);
  }
}

/** The table printed at the end: one row per board, failures with their reason below. */
export function rigSummary(results: RigFlashResult[]): string {
  const rows = [['board', 'port', 'chip', 'MAC', 'written', 'skipped', 'seconds', 'line_ratio', 'verified', 'booted']];
  for (const r of results) {
    const o = r.outcome;
    rows.push([
      r.target.id,
      r.target.port,
      o ? o.chip.replace(/ \(.*$/, '') : '-',
      o?.mac ?? '-',
      String(r.bytesWritten),
      String(r.bytesSkipped),
      r.seconds.toFixed(1),
      r.lineRateRatio === undefined ? '-' : r.lineRateRatio.toFixed(2),
      o ? 'yes' : 'no',
      o?.booted?.version ?? (r.error ? `FAILED (exit ${r.exitCode})` : '-'),
    ]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  const lines = rows.map((row) => row.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd());
  for (const r of results) if (r.error) lines.push(`${r.target.id}: ${r.error}`);
  return lines.join('\n');
}
