// A `fleet` command on a pseudo-terminal, as in a user's terminal (its standard input is a TTY, so
// the monitor reads keys): socat allocates the pty and runs the command through sh; what the test
// writes is typed, what the command prints (stdout and stderr) is collected, its exit code is read
// from a marker line, since socat does not pass it on.
import { spawn } from 'node:child_process';
import { FLEET_JS, ROOT, toolEnv } from './fleet-cli.ts';

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

export interface TerminalRun {
  type(bytes: string | Uint8Array): void;
  /** Everything printed so far, with the terminal's \r\n as \n. */
  output(): string;
  seen(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

export function fleetOnTerminal(args: string[], env: Record<string, string> = {}): TerminalRun {
  const command = [process.execPath, FLEET_JS, ...args].map(quote).join(' ');
  // The command travels in the environment: socat's address syntax gives ':' and ',' meanings.
  const child = spawn('socat', ['-', 'SYSTEM:eval "$FLEET_TERMINAL_COMMAND"; echo "[exit $?]",pty,setsid,ctty,stderr'], {
    cwd: ROOT,
    env: { ...toolEnv(), ...env, FLEET_TERMINAL_COMMAND: command },
  });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  const output = () => out.replace(/\r\n/g, '\n');
  return {
    type: (bytes) => void child.stdin.write(bytes),
    output,
    async seen(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(output())) {
        if (Date.now() > deadline) throw new Error(`the terminal never showed ${pattern}; it showed:\n${output()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    exited: new Promise((resolve) =>
      child.once('exit', () => {
        const m = /\[exit (\d+)\]\n?$/.exec(output());
        resolve(m ? Number(m[1]) : null);
      }),
    ),
  };
}
