// The one shape of a `fleet` command module: `register(program, ctx)`. A module adds its commands (or
// its verbs under a topic: `device`, `firmware`, `image`…) to the program and takes what it needs
// from the context; tools/fleet.ts only calls each module's register. Errors a user can act on are
// thrown with an `exitCode` (cloud/exit-codes.ts) and said by fleet.ts's main(), in one place.
import type { Command } from 'commander';
import type { CloudClient } from '../client.ts';

export interface CommandContext {
  /** The cloud, with the token given (--token, FLEET_TOKEN) or one minted for the operator on first use. */
  client: () => CloudClient;
  /** The exit code of a command that ran to its end but did not succeed (a rig whose board failed). */
  setExit: (code: number) => void;
  /** A value as JSON on standard output, for scripts. */
  print: (value: unknown) => void;
  /** Who runs the command (`--as`, FLEET_OPERATOR, else user@host): the subject of the tokens it mints. */
  operator: () => string;
}

export type RegisterCommands = (program: Command, ctx: CommandContext) => void;

/** The topics more than one module adds verbs to, each described once. */
const TOPICS = Object.freeze({
  firmware: 'Release, revoke and list firmware versions',
  device: 'Enroll, remove, list and show devices (the inventory), count their versions, set their labels and groups',
});

/** The topic command (`fleet device`, `fleet firmware`), made by whichever module comes first. */
export function topic(program: Command, name: keyof typeof TOPICS): Command {
  return program.commands.find((c) => c.name() === name) ?? program.command(name).description(TOPICS[name]);
}
