// A PostgreSQL server as a plain process on 127.0.0.1 in a temporary folder (Debian's postgresql
// package; .ci/run installs it), for the store tests (test/setup/postgres.ts) and the fleet bench
// (tools/bench/fleet-bench.ts). As root, it runs as the `postgres` user, as PostgreSQL requires.
// Nothing is left running (docs/fleet-scale.md): the server ends with the process that started it,
// however that one ends. pg_ctl puts the server in a session of its own (Ctrl-C in a terminal does not
// reach it), so a watchdog (tools/postgres-watchdog.mjs, its own session too) polls the owner and, once
// it is gone (SIGKILL included), stops the server and removes its folder; and every start first reaps
// the folders in the temp folder whose owner is gone (a watchdog killed with its owner).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../harness/ports.ts';
import { ownerAlive, processStart } from './process-owner.mjs';

export interface PostgresServer {
  /** postgres://fleet@127.0.0.1:<port>/postgres: a superuser connection to create databases with. */
  url: string;
  /** Its folder in the system's temp folder (data, log, socket, owner.json), removed by stop(). */
  dir: string;
  /** The watchdog's pid (tools/postgres-watchdog.mjs). */
  watchdogPid: number | undefined;
  stop(): void;
}

/** The folders of servers started here: `fleet-pg-*` in the system's temp folder. */
const PREFIX = 'fleet-pg-';
const WATCHDOG = new URL('./postgres-watchdog.mjs', import.meta.url).pathname;

/** Who started a server, written into its folder: the watchdog and the reaper read it. */
interface Owner {
  pid: number;
  /** The owner's start time (/proc/<pid>/stat, clock ticks since boot): a pid reused later is not the owner. */
  start: string | undefined;
  pgCtl: string;
  asRoot: boolean;
}

function stopServer(data: string, pgCtl: string, asRoot: boolean, mode: 'fast' | 'immediate'): void {
  if (!existsSync(join(data, 'postmaster.pid'))) return;
  const args = ['-D', data, '-m', mode, '-w', '-t', '30', 'stop'];
  if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', pgCtl, ...args], { stdio: 'pipe' });
  else execFileSync(pgCtl, args, { stdio: 'pipe' });
}

/**
 * Stops the servers of `fleet-pg-*` folders in `root` (default: the system's temp folder) whose owner
 * is gone, and removes their folders. Folders without owner.json (older runs, or a start under way)
 * are left alone: nothing says whose they are. Returns the folders reaped.
 */
export function reapOrphanedPostgres(root = tmpdir()): string[] {
  const reaped: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(root).filter((n) => n.startsWith(PREFIX));
  } catch {
    return reaped;
  }
  for (const name of names) {
    const dir = join(root, name);
    let owner: Owner;
    try {
      owner = JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')) as Owner;
    } catch {
      continue;
    }
    if (ownerAlive(owner)) continue;
    try {
      stopServer(join(dir, 'data'), owner.pgCtl, owner.asRoot, 'immediate');
    } catch {
      /* not running, or already stopping: the folder goes anyway */
    }
    rmSync(dir, { recursive: true, force: true });
    reaped.push(dir);
  }
  return reaped;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (versions.length === 0) throw new Error('PostgreSQL is not installed: apt-get install postgresql (the cloud store tests run against a real server)');
  return join(root, versions[0]!, 'bin');
}

export async function startPostgres(): Promise<PostgresServer> {
  reapOrphanedPostgres();
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), PREFIX));
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const pw = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const uid = Number(pw.stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    if (!Number.isInteger(uid)) throw new Error('running as root needs the postgres user (apt-get install postgresql creates it)');
    chownSync(dir, uid, gid);
  }
  const run = (cmd: string, args: string[]) =>
    asRoot ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { stdio: 'pipe' }) : execFileSync(join(bin, cmd), args, { stdio: 'pipe' });
  const owner: Owner = { pid: process.pid, start: processStart(process.pid), pgCtl: join(bin, 'pg_ctl'), asRoot };
  // owner.json before the server exists: from here on the watchdog or a later reaper removes the folder.
  writeFileSync(join(dir, 'owner.json'), JSON.stringify(owner));
  const watchdog = spawn(process.execPath, [WATCHDOG, dir], { detached: true, stdio: 'ignore' });
  watchdog.unref();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      stopServer(data, owner.pgCtl, asRoot, 'fast');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      // Its folder gone, the watchdog would end at its next look; ended now.
      if (watchdog.pid !== undefined) {
        try {
          process.kill(watchdog.pid, 'SIGTERM');
        } catch {
          /* gone */
        }
      }
    }
  };
  try {
    run('initdb', ['-D', data, '-U', 'fleet', '--auth=trust', '-E', 'UTF8', '--locale=C']);
    const port = await freeLoopbackPort();
    run('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '30', '-o', `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} -c fsync=off -c synchronous_commit=off`, 'start']);
    return { url: `postgres://fleet@127.0.0.1:${port}/postgres`, dir, watchdogPid: watchdog.pid, stop };
  } catch (err) {
    stop();
    throw err;
  }
}
