// The `fleet` command's exit codes in one table (README "Exit codes", docs/cli-errors.md). Every
// command's own list is a view of this one (FLASH_EXIT, EFUSE_EXIT, CONSOLE_EXIT, FARM_EXIT), so a
// number means one thing wherever it is the same kind of failure: 0 to 6 mean the same to every
// command; 7 to 11 are the hardware commands' (fleet flash and fleet bench --flash, and fleet efuse,
// which gives 7 to 9 meanings of its own); 12 to 15 the board farm's. Here, below everything that
// exits with them: the cloud's own start (fleet serve) and the file errors are the first to need them.

export const EXIT_CODES = Object.freeze({
  ok: 0,
  /** The command ran and the answer was no: the cloud refused (its error code is printed), a console ERR, a burn declined. */
  refused: 1,
  /** A usage error, a file named on the command line that cannot be read included. */
  usage: 2,
  /** The cloud could not be reached. */
  unreachable: 3,
  /** Bad configuration: a port in use, a store or secret file that cannot be created, a wrong rig file, a missing prerequisite. */
  config: 4,
  /** A serial port that cannot be opened or reached, or that another program holds. */
  port: 5,
  /** No answer from the board (its ROM or its firmware) in time. */
  noAnswer: 6,
  flashWrongChip: 7,
  flashDoesNotFit: 8,
  flashVerify: 9,
  flashNoBoot: 10,
  /** A board of `--rig` failed (the summary says which and why). */
  flashRig: 11,
  efuseUnexpected: 7,
  efuseRefused: 8,
  efuseNotBurned: 9,
  farmUnreachable: 12,
  farmNoMatch: 13,
  farmNotAllocated: 14,
  farmRefused: 15,
} as const);
