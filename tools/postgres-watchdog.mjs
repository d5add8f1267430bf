// The parent-death watch of a PostgreSQL server that tools/postgres-server.ts started (docs/fleet-scale.md,
// "nothing left running"): a small process of its own session, started beside the server, that polls
// the process that started it and, once that one is gone however it ended (SIGKILL included), stops the
// server (pg_ctl, mode immediate) and removes its folder in the system's temp folder. It also ends when
// the folder is gone (the owner stopped the server itself). Plain JavaScript: it starts in ~40 ms and
// needs no loader.
//   node tools/postgres-watchdog.mjs <folder>
// The folder holds owner.json ({ pid, start, pgCtl, asRoot }), written by postgres-server.ts.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ownerAlive } from './process-owner.mjs';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: node tools/postgres-watchdog.mjs <folder>\n');
  process.exit(2);
}
const POLL_MS = 200;

function reap(owner) {
  const data = join(dir, 'data');
  if (existsSync(join(data, 'postmaster.pid'))) {
    const args = ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop'];
    try {
      if (owner.asRoot) execFileSync('runuser', ['-u', 'postgres', '--', owner.pgCtl, ...args], { stdio: 'ignore' });
      else execFileSync(owner.pgCtl, args, { stdio: 'ignore' });
    } catch {
      /* not running any more */
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

let owner;
try {
  owner = JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8'));
} catch {
  process.exit(0); // already gone
}
const timer = setInterval(() => {
  if (!existsSync(dir)) {
    clearInterval(timer);
    return;
  }
  if (ownerAlive(owner)) return;
  clearInterval(timer);
  reap(owner);
}, POLL_MS);
