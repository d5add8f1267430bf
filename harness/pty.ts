// A linked pair of pseudo-terminals (socat), one end for the virtual board, one for the harness:
// the console crosses a real serial line discipline, as with a USB adapter. A pseudo-terminal has
// no modem lines (setting DTR/RTS fails with ENOTTY), so on this path a virtual board is reset, and
// put into download mode, by the bench's boot control (VirtualBoard.holdBoot and reset); the
// board's RFC 2217 port carries DTR/RTS instead. The harness end may be closed and opened again
// (a flashing tool takes it over from the console) while the board end stays open.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { stopChild, trackChild } from './child-process.ts';

export interface PtyPair {
  boardEnd: string;
  harnessEnd: string;
  close(): Promise<void>;
}

export async function openPtyPair(dir: string, name: string): Promise<PtyPair> {
  const boardEnd = join(dir, `${name}.board`);
  const harnessEnd = join(dir, `${name}.tty`);
  let child: ChildProcess;
  try {
    child = trackChild(spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${boardEnd}`, `pty,raw,echo=0,link=${harnessEnd}`], { stdio: ['ignore', 'ignore', 'pipe'] }));
  } catch (err) {
    throw new Error(`socat is needed for virtual serial consoles (apt-get install socat): ${(err as Error).message}`);
  }
  let stderr = '';
  child.stderr?.on('data', (c) => (stderr += c));
  const spawnError = new Promise<never>((_, reject) => child.once('error', (err) => reject(new Error(`socat is needed for virtual serial consoles (apt-get install socat): ${err.message}`))));
  const deadline = Date.now() + 5000;
  while (!(existsSync(boardEnd) && existsSync(harnessEnd))) {
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`socat did not create the pty pair within 5 s: ${stderr}`);
    }
    await Promise.race([new Promise((r) => setTimeout(r, 20)), spawnError]);
  }
  return {
    boardEnd,
    harnessEnd,
    close: () => stopChild(child),
  };
}
