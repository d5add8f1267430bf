// The PostgreSQL servers the tests and bench:fleet start (tools/postgres-server.ts) end with the process
// that started them, whatever ends it (docs/fleet-scale.md, "nothing left running"): SIGKILL of the
// owner leaves the watchdog to stop the server and remove its folder; with the watchdog killed too, the
// next start's reaper does it; a folder whose owner lives, or that says no owner, is left alone.
// Real servers, real signals; the waits are bounded, not timed assertions.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reapOrphanedPostgres, startPostgres } from '../../tools/postgres-server.ts';

const OWNER = new URL('../helpers/postgres-owner.ts', import.meta.url).pathname;
const TSX = import.meta.resolve('tsx');

interface Started {
  url: string;
  dir: string;
  watchdogPid: number;
  postmasterPid: number;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Whether a process lives (a zombie counts as gone). */
function alive(pid: number): boolean {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function until(what: string, test: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The owner process: it starts a server and says so. */
function startOwner(args: string[] = []): Promise<{ child: ChildProcess; started: Started }> {
  const child = spawn(process.execPath, ['--import', TSX, OWNER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let errText = '';
    child.stderr!.on('data', (c: Buffer) => (errText += c.toString()));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line && out.includes('\n')) {
        const started = JSON.parse(line) as Started;
        dirs.push(started.dir);
        resolve({ child, started });
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`the owner exited (${code ?? signal}): ${errText.slice(-2000)}`)));
  });
}

describe('PostgreSQL servers end with their owner', () => {
  it('stop(): the server stops, its folder and its watchdog go', async () => {
    const server = await startPostgres();
    dirs.push(server.dir);
    const postmaster = Number(readFileSync(join(server.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    expect(alive(postmaster)).toBe(true);
    expect(alive(server.watchdogPid!)).toBe(true);
    server.stop();
    expect(existsSync(server.dir)).toBe(false);
    await until('the server stops', () => !alive(postmaster));
    await until('the watchdog ends', () => !alive(server.watchdogPid!));
  });

  it('SIGKILL of the owner: the watchdog stops the server and removes its folder', async () => {
    const { child, started } = await startOwner();
    expect(alive(started.postmasterPid)).toBe(true);
    expect(existsSync(join(started.dir, 'owner.json'))).toBe(true);
    child.kill('SIGKILL');
    await until('the server stops', () => !alive(started.postmasterPid));
    await until('its folder goes', () => !existsSync(started.dir));
    await until('the watchdog ends', () => !alive(started.watchdogPid));
  });

  it('SIGTERM of an owner that stops its server on signals: all gone', async () => {
    const { child, started } = await startOwner(['--stop-on-signal']);
    child.kill('SIGTERM');
    await until('the server stops', () => !alive(started.postmasterPid));
    await until('its folder goes', () => !existsSync(started.dir));
    await until('the watchdog ends', () => !alive(started.watchdogPid));
  });

  it('owner and watchdog both killed: the next start reaps the server and its folder', async () => {
    const { child, started } = await startOwner();
    process.kill(started.watchdogPid, 'SIGKILL');
    child.kill('SIGKILL');
    await until('the owner is gone', () => !alive(child.pid!));
    // Still running: nothing watched it.
    expect(alive(started.postmasterPid)).toBe(true);
    const next = await startPostgres();
    dirs.push(next.dir);
    try {
      expect(existsSync(started.dir)).toBe(false);
      await until('the orphaned server stops', () => !alive(started.postmasterPid));
    } finally {
      next.stop();
    }
  });

  it('an owner that is a zombie (exited, its parent not yet told) is gone: its folder is reaped', async () => {
    // `sleep 0` exits at once, and the shell that started it becomes `sleep 5`, which never waits for it.
    const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 5'], { stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(parent);
    const zombie = Number((await new Promise<Buffer>((r) => parent.stdout!.once('data', r))).toString().trim());
    const state = () => {
      const text = readFileSync(`/proc/${zombie}/stat`, 'utf8');
      return text.slice(text.lastIndexOf(')') + 2).split(' ');
    };
    await until('the child is a zombie', () => state()[0] === 'Z');
    const root = mkdtempSync(join(tmpdir(), 'reaper-test-'));
    dirs.push(root);
    const d = join(root, 'fleet-pg-zombie');
    mkdirSync(join(d, 'data'), { recursive: true });
    writeFileSync(join(d, 'owner.json'), JSON.stringify({ pid: zombie, start: state()[19], pgCtl: '/bin/false', asRoot: false }));
    expect(reapOrphanedPostgres(root)).toEqual([d]);
    expect(existsSync(d)).toBe(false);
  });

  it('the reaper leaves folders whose owner lives, and folders that name no owner', () => {
    const root = mkdtempSync(join(tmpdir(), 'reaper-test-'));
    dirs.push(root);
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    const folder = (name: string, owner?: object) => {
      const d = join(root, `fleet-pg-${name}`);
      mkdirSync(join(d, 'data'), { recursive: true });
      if (owner) writeFileSync(join(d, 'owner.json'), JSON.stringify(owner));
      return d;
    };
    const orphan = folder('orphan', { pid: gone, start: '1', pgCtl: '/bin/false', asRoot: false });
    const reused = folder('reused', { pid: process.pid, start: 'not-this-one', pgCtl: '/bin/false', asRoot: false });
    const mine = folder('mine', { pid: process.pid, start: readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19], pgCtl: '/bin/false', asRoot: false });
    const unknown = folder('unknown');
    expect(reapOrphanedPostgres(root).sort()).toEqual([orphan, reused].sort());
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(reused)).toBe(false);
    expect(existsSync(mine)).toBe(true);
    expect(existsSync(unknown)).toBe(true);
  });
});
