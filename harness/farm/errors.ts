// What goes wrong with a farm, as errors a command line maps to its exit codes (docs/cli-errors.md):
// the coordinator cannot be reached, tags that match no place, a reservation that does not come in
// time, and a coordinator or exporter that refuses (a place held by another, a quarantined board).
import { EXIT_CODES } from '../../cloud/exit-codes.ts';

export const FARM_EXIT = Object.freeze({ unreachable: EXIT_CODES.farmUnreachable, no_match: EXIT_CODES.farmNoMatch, not_allocated: EXIT_CODES.farmNotAllocated, refused: EXIT_CODES.farmRefused });
export type FarmFailure = keyof typeof FARM_EXIT;

export class FarmError extends Error {
  override name = 'FarmError';
  constructor(
    readonly failure: FarmFailure,
    message: string,
  ) {
    super(message);
  }
  get exitCode(): number {
    return FARM_EXIT[this.failure];
  }
}
