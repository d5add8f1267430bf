// sendOrDrop (cloud/peers/ipc.ts): a message to a process that died before its channel was seen to
// close. A plain send then emits 'error' (EPIPE), which ended the supervisor of `fleet serve` when a
// worker that could not start exited as it was told to stop; sendOrDrop reports false instead.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sendOrDrop } from '../../cloud/peers/ipc.ts';

/** A child with an IPC channel running `code`. */
function child(code: string): ChildProcess {
  return spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
}

/**
 * A child that exits at once, returned once it is dead (per /proc: its main thread a zombie and its
 * other threads gone, so its end of the channel is closed) while this process has not yet run its
 * event loop: `connected` still says true, as it did in the supervisor.
 */
async function deadButConnected(): Promise<ChildProcess> {
  const c = child('process.exit(0)');
  await new Promise<void>((r) => c.once('spawn', () => r()));
  const dead = () => {
    try {
      return readFileSync(`/proc/${c.pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] === 'Z' && readdirSync(`/proc/${c.pid}/task`).length === 1;
    } catch {
      return true; // reaped already
    }
  };
  const until = Date.now() + 10_000;
  while (!dead() && Date.now() < until); // synchronous: no 'disconnect' can be processed meanwhile
  expect(dead()).toBe(true);
  expect(c.connected).toBe(true);
  return c;
}

const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null ? r() : c.once('exit', () => r())));

describe('sendOrDrop', () => {
  it('a plain send to a dead child emits EPIPE as an error event (the failure it guards against)', async () => {
    const c = await deadButConnected();
    const errors: string[] = [];
    c.on('error', (e: NodeJS.ErrnoException) => errors.push(e.code ?? e.message));
    c.send({ t: 'shutdown' });
    await exited(c);
    await new Promise((r) => setTimeout(r, 50));
    expect(errors).toEqual(['EPIPE']);
  });

  it('to a dead child: resolves false, and no error event', async () => {
    const c = await deadButConnected();
    const errors: unknown[] = [];
    c.on('error', (e) => errors.push(e));
    expect(await sendOrDrop(c, { t: 'shutdown' })).toBe(false);
    await exited(c);
    // After the channel closed: still false, still no event.
    expect(await sendOrDrop(c, { t: 'shutdown' })).toBe(false);
    expect(errors).toEqual([]);
  });

  it('to a live child: resolves true and the child reads the message', async () => {
    const c = child(`process.on('message', (m) => { process.send({ echo: m }, () => process.exit(0)); });`);
    const echo = new Promise<unknown>((r) => c.once('message', r));
    expect(await sendOrDrop(c, { t: 'event', id: 7 })).toBe(true);
    expect(await echo).toEqual({ echo: { t: 'event', id: 7 } });
    await exited(c);
  });

  it('an end without a channel: false', async () => {
    expect(await sendOrDrop({}, { t: 'applied', id: 1 })).toBe(false);
  });
});
