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

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: node tools/postgres-watchdog.mjs <folder>\n');
  process.exit(2);
}
const POLL_MS = 200;

/** The start time of a process (clock ticks since boot, /proc/<pid>/stat field 22), or undefined when it is gone. */
function processStart(pid) {
  try {
    // pid (comm) state …: comm may hold spaces and parentheses, so the fields after the last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function ownerAlive(owner) {
  if (existsSync('/proc/self/stat')) {
    // The same pid given to another process since is not the owner.
    const start = processStart(owner.pid);
    return start !== undefined && (owner.start === undefined || start === owner.start);
  }
  try {
    process.kill(owner.pid, 0); // no /proc (not Linux): signal 0 says whether it lives
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

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
