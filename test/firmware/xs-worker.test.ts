// Runs code inside the real XS engine (@agoric/xsnap's xsnap-worker) through firmware/xs/worker.ts.
import { createECDH } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bundleForXs } from '../../firmware/xs/bundle.ts';
import { XsError, XsWorker, type XsWorkerOptions } from '../../firmware/xs/worker.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const started: XsWorker[] = [];

async function startWorker(opts: XsWorkerOptions = {}): Promise<XsWorker> {
  const worker = await XsWorker.start({ name: 'xs-test', ...opts });
  started.push(worker);
  return worker;
}

/** Wraps an expression so that its String() becomes the evaluate reply (only ArrayBuffers are replied). */
const asReply = (expr: string) => `new TextEncoder().encode(String(${expr})).buffer`;

afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.close()));
});

describe('XsWorker', () => {
  it('evaluates code and reports compute meter usage', async () => {
    const worker = await startWorker();
    const { reply, meterUsage } = await worker.evaluate(asReply('[1, 2, 3].map((x) => x * 2).join()'));
    expect(decoder.decode(reply)).toBe('2,4,6');
    expect(meterUsage.compute).toBeGreaterThan(0);
    expect(meterUsage.allocate).toBeGreaterThan(0);
    // A non-ArrayBuffer completion value gives an empty reply.
    expect((await worker.evaluate('1 + 1')).reply).toHaveLength(0);
  });

  it('delivers commands to globalThis.handleCommand and returns its bytes', async () => {
    const worker = await startWorker();
    await worker.evaluate(`globalThis.handleCommand = (buf) => new Uint8Array(buf).map((b) => b + 1).reverse().buffer`);
    const { reply } = await worker.issueCommand(new Uint8Array([1, 2, 3]));
    expect([...reply]).toEqual([4, 3, 2]);
    expect((await worker.issueStringCommand('HAL')).reply).toBe('MBI');
  });

  it('lets the worker call the host synchronously, with the host answering asynchronously', async () => {
    const seen: string[] = [];
    const worker = await startWorker({
      handleCommand: async (message) => {
        seen.push(decoder.decode(message));
        await new Promise((resolve) => setTimeout(resolve, 20));
        return encoder.encode(`host saw ${decoder.decode(message)}`);
      },
    });
    await worker.evaluate(`
      globalThis.handleCommand = (buf) => {
        const ask = (s) => new TextDecoder().decode(issueCommand(new TextEncoder().encode(s).buffer));
        return new TextEncoder().encode(ask('gpio.read 4') + ' | ' + ask('i2c.write')).buffer;
      };`);
    const { reply, meterUsage } = await worker.issueStringCommand('go');
    expect(reply).toBe('host saw gpio.read 4 | host saw i2c.write');
    expect(seen).toEqual(['gpio.read 4', 'i2c.write']);
    // Delivery in, (sent, answered) per host call, reply out.
    expect(meterUsage.timestamps).toHaveLength(6);
  });

  it('turns a host handleCommand failure into an exception in XS and a rejected request', async () => {
    const worker = await startWorker({ handleCommand: () => Promise.reject(new Error('no such pin')) });
    await worker.evaluate(`globalThis.handleCommand = () => { try { issueCommand(new ArrayBuffer(1)) } catch (e) { globalThis.seen = String(e) } }`);
    await expect(worker.issueCommand(new Uint8Array(0))).rejects.toThrow('host handleCommand failed: no such pin');
    expect(decoder.decode((await worker.evaluate(asReply('globalThis.seen'))).reply)).toMatch(/Received unexpected command reply/);
  });

  it('refuses a request made before handleCommand answers, but queues a deferred one', async () => {
    let early: Promise<unknown> | undefined;
    let deferred: Promise<string> | undefined;
    const worker: XsWorker = await startWorker({
      handleCommand: (message) => {
        // Awaiting this inside the handler would deadlock: the worker waits for our answer.
        early = worker.evaluate('1').catch((e: unknown) => e);
        setTimeout(() => {
          deferred = worker.evaluate(asReply('"after"')).then((r) => decoder.decode(r.reply));
        });
        return message;
      },
    });
    await worker.evaluate(`globalThis.handleCommand = (buf) => issueCommand(buf)`);
    expect((await worker.issueStringCommand('ping')).reply).toBe('ping');
    expect(String(await early)).toMatch('cannot send a request before handleCommand has answered');
    await vi.waitFor(() => expect(deferred).toBeDefined());
    expect(await deferred).toBe('after');
  });

  it('drains promise jobs before replying; async handlers answer through a { result } object', async () => {
    const worker = await startWorker();
    await worker.evaluate(`
      globalThis.handleCommand = (buf) => {
        const report = {};
        (async () => {
          await null;
          report.result = new TextEncoder().encode('async ' + new TextDecoder().decode(buf)).buffer;
        })();
        return report;
      };`);
    expect((await worker.issueStringCommand('done')).reply).toBe('async done');
    // A Promise has no .result: its value is lost and the reply is empty.
    await worker.evaluate(`globalThis.handleCommand = async (buf) => buf`);
    expect((await worker.issueStringCommand('lost')).reply).toBe('');
  });

  it('surfaces exceptions thrown inside XS as XsError and stays usable', async () => {
    const worker = await startWorker();
    const err = await worker.evaluate(`throw new RangeError('bad duty cycle')`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(XsError);
    expect((err as XsError).message).toBe('RangeError: bad duty cycle');
    await worker.evaluate(`globalThis.handleCommand = () => { null.x }`);
    await expect(worker.issueCommand(new Uint8Array(0))).rejects.toThrow(/^TypeError: .*cannot coerce null to object/);
    expect(decoder.decode((await worker.evaluate(asReply('"alive"'))).reply)).toBe('alive');
  });

  it('supports BigInt', async () => {
    const worker = await startWorker();
    const { reply } = await worker.evaluate(asReply('(2n ** 100n + 1n) % 1000000007n'));
    expect(decoder.decode(reply)).toBe(String((2n ** 100n + 1n) % 1000000007n));
  });

  it('serializes concurrent requests in call order', async () => {
    const worker = await startWorker();
    await worker.evaluate('globalThis.n = 0');
    const replies = await Promise.all([1, 2, 3, 4].map(() => worker.evaluate(asReply('++globalThis.n'))));
    expect(replies.map((r) => decoder.decode(r.reply))).toEqual(['1', '2', '3', '4']);
  });

  it('forwards print() output', async () => {
    const lines: string[] = [];
    const worker = await startWorker({ onOutput: (line) => lines.push(line) });
    await worker.evaluate(`print('led', 1, 'on')`);
    await vi.waitFor(() => expect(lines).toContain('led 1 on'));
  });

  it('runs a bundled TS fixture using @noble/hashes and @noble/curves', async () => {
    const code = await bundleForXs(fileURLToPath(new URL('./fixtures/xs-crypto.ts', import.meta.url)));
    const worker = await startWorker();
    await worker.evaluate(code);
    const privateKey = Buffer.from('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721', 'hex');
    const { reply, meterUsage } = await worker.issueCommand(privateKey);
    const answer = JSON.parse(decoder.decode(reply)) as { sha256: string; publicKey: string };
    expect(answer.sha256).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(privateKey);
    expect(answer.publicKey).toBe(ecdh.getPublicKey('hex', 'uncompressed'));
    console.log('p256 getPublicKey + sha256 in XS:', meterUsage);
  });

  it('reports allocate growth that is reproducible across workers', async () => {
    const measure = async () => {
      const worker = await startWorker();
      const before = (await worker.evaluate('0')).meterUsage.allocate;
      const after = (await worker.evaluate('globalThis.big = new Array(4e6).fill(0); 0')).meterUsage;
      return { before, after: after.allocate, compute: after.compute };
    };
    const first = await measure();
    const second = await measure();
    console.log('allocate before/after a 4e6-element array:', first, second);
    expect(first.after).toBeGreaterThan(first.before + 4e6 * 8);
    expect(second).toEqual(first);
  });

  it('closes cleanly and idempotently; later calls reject', async () => {
    const worker = await startWorker();
    await Promise.all([worker.close(), worker.close()]);
    await expect(worker.evaluate('1')).rejects.toThrow('xs-test" is closed');
  });

  it('kills a worker that does not quit within 2 s of close()', async () => {
    const worker = await startWorker();
    const hung = worker.evaluate('for (;;) {}');
    const t0 = Date.now();
    await worker.close();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    await expect(hung).rejects.toThrow('exited with signal SIGKILL');
  });

  it('runs the debug build too: `debug: true` starts the debug binary, the default the release one', async () => {
    // Which executable each worker process runs, read from /proc (the worker is Linux-only).
    const workerBinaries = () => {
      const found = new Map<number, string>();
      for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          if (ppid !== process.pid) continue;
          const exe = readlinkSync(`/proc/${pid}/exe`);
          if (exe.endsWith('/xsnap-worker')) found.set(Number(pid), exe);
        } catch {
          /* a process that ended meanwhile */
        }
      }
      return found;
    };
    const binaryOf = async (opts: XsWorkerOptions) => {
      const before = workerBinaries();
      const worker = await startWorker(opts);
      expect(decoder.decode((await worker.evaluate(asReply('6 * 7'))).reply)).toBe('42');
      const added = [...workerBinaries()].filter(([pid]) => !before.has(pid)).map(([, exe]) => exe);
      expect(added).toHaveLength(1);
      return added[0]!;
    };
    expect(await binaryOf({ debug: true })).toMatch(/\/build\/bin\/lin\/debug\/xsnap-worker$/);
    expect(await binaryOf({})).toMatch(/\/build\/bin\/lin\/release\/xsnap-worker$/);
    expect(await binaryOf({ debug: false })).toMatch(/\/build\/bin\/lin\/release\/xsnap-worker$/);
  });

  it('rejects pending and later calls when the worker dies', async () => {
    const worker = await startWorker({ meteringLimit: 1_000_000 });
    await expect(worker.evaluate('for (;;) {}')).rejects.toThrow(/exited with code 17 \(too much computation\)/);
    await expect(worker.evaluate('1')).rejects.toThrow(/exited with code 17/);
    await worker.close();
  });
});
