// Runs one step of the SDK's build as a child process and keeps what it printed, so a failure can
// show the lines that matter and a success stays quiet.
import { spawn } from 'node:child_process';

export interface StepResult {
  code: number;
  /** stdout and stderr interleaved, as a terminal would show them. */
  output: string;
  seconds: number;
}

export interface StepOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Called with each line as it arrives (progress for long steps). */
  onLine?: (line: string) => void;
}

export function runStep(command: string, args: readonly string[], options: StepOptions = {}): Promise<StepResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let partial = '';
    const take = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      if (!options.onLine) return;
      const lines = (partial + text).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) options.onLine(line);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (options.onLine && partial !== '') options.onLine(partial);
      resolve({ code: code ?? (signal ? 128 : 1), output, seconds: (performance.now() - started) / 1000 });
    });
  });
}

/** The last lines of a step's output, for an error message. */
export function tail(output: string, lines = 25): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n');
}
