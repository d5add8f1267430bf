// Who runs a `fleet` command, as the audit log names them (docs/operator-identity.md): `--as <name>`,
// else FLEET_OPERATOR, else the OS user at this host (alice@ops-laptop). The tokens the command mints
// carry it as their subject, so people who share the JWT secret stay apart in "who changed what".
import { InvalidArgumentError } from 'commander';
import { hostname, userInfo } from 'node:os';

/** The audit log keeps 256 characters of a subject. */
const MAX_OPERATOR = 256;

/** `--as`'s check: a name someone reads in a table, not a line break or a control character. */
export function operatorOption(value: string): string {
  const name = value.trim();
  // eslint-disable-next-line no-control-regex
  if (name === '' || name.length > MAX_OPERATOR || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new InvalidArgumentError(`must be a name of 1 to ${MAX_OPERATOR} characters without control characters: ${JSON.stringify(value)}`);
  }
  return name;
}

/** The operator: the name given (`--as`, FLEET_OPERATOR), else user@host. */
export function operatorName(given: string | undefined): string {
  if (given !== undefined) return given;
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for this uid (a container): the variables a shell sets, else the uid.
    user = process.env.USER || process.env.LOGNAME || `uid-${process.getuid?.() ?? 'unknown'}`;
  }
  return `${user}@${hostname()}`;
}
