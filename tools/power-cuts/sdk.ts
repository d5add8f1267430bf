// Power cuts on virtual boards: the firmware the Moddable SDK built for the host, in its XS engine
// (firmware/virtual-esp32/board.ts, SdkBoard), its file system the SDK's own `file` module over the
// board's flash folder (real files). A power cut is what it is on a chip: the firmware process is
// killed (SIGKILL) wherever it is, and what reached the flash stays. Where it is killed is chosen by
// a watch on the file system (SdkBoardOptions.onFlashOp, firmware/sdk-host/natives/fw_host_flash.c):
// the firmware asks before each create, write, delete, rename, mkdir and rmdir and waits for the
// answer, so the cut falls exactly before the n-th of them; a write cut leaves a seeded prefix of its
// bytes on the flash (a page programmed, the next not). Fewer cuts than on the memory platform (each
// costs board starts), but the same checks (common.ts), so that both flash layers are proven. One
// board's flash is cut again and again: each trial brings it to a known old state, cuts one
// operation, powers a board up again on the same folder and checks it.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type FlashOp, SdkBoard, startSdkBoard, VirtualAir } from '../../harness/virtual-board.ts';
import { PASSWORD_PATH } from '../../firmware/src/core/auth/visual-token.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { PowerSwitch } from '../../firmware/src/platform/memory/power-cut.ts';
import { clientConfig } from '../../firmware/test-cases/fixtures.ts';
import { checkRecovered, controllerIdentity, describeFiles, durableState, login, wholeStateProblems, NEW_BACKUP, OLD_BACKUP, PASSWORD, snapshot, type Answer, type BoardAccess, type FlashState } from './common.ts';
import type { TrialResult } from './memory.ts';
import { API_PATHS, recordPath } from '../../firmware/src/core/api-paths.ts';

const identity = (uuid: string, n: number) => controllerIdentity(uuid, n, 'board');

/** Where a cut fell: the operation (its 1-based number since arm()) and, for a write, the bytes that reached the flash. */
export interface Cut {
  op: FlashOp['op'] | 'after the last operation';
  path: string;
  at: number;
  kept?: number;
  length?: number;
}

/**
 * The power switch of a virtual board's supply, watching its file system: counts the operations that
 * change the flash and cuts the power at the armed one. One per board folder; a new board on the same
 * folder is watched by the same switch (its `watch` is the board's onFlashOp).
 */
export class FlashCutter {
  /** Operations since the last arm(). */
  ops = 0;
  /** Those operations, as `<op> <path>` (a write: `write <file> <length>`). */
  readonly seen: string[] = [];
  cut: Cut | null = null;
  /** The file each write goes to: the one created last (the firmware writes one file at a time). */
  private writing = '';
  private cutAt: number | null = null;
  private cutNow: (() => void) | undefined;
  /** Resolves when the power goes (a request or a console command in flight never gets its answer). */
  whenCut: Promise<void>;
  private readonly rng: PowerSwitch;

  constructor(seed: number) {
    this.rng = new PowerSwitch(seed);
    this.whenCut = this.fresh();
  }

  private fresh(): Promise<void> {
    return new Promise((resolve) => (this.cutNow = resolve));
  }

  /** Cut the power before the n-th operation from now (1-based); null never cuts. Clears the last cut. */
  arm(n: number | null): void {
    this.ops = 0;
    this.seen.length = 0;
    this.cutAt = n;
    if (this.cut) this.whenCut = this.fresh();
    this.cut = null;
  }

  /** SdkBoardOptions.onFlashOp. */
  readonly watch = (op: FlashOp): 'go' | 'cut' | number => {
    if (this.cut) return 'cut';
    this.ops++;
    if (op.op === 'create') this.writing = op.path;
    this.seen.push(op.op === 'write' ? `write ${this.writing} ${op.length}` : `${op.op} ${op.path}`);
    if (this.cutAt === null || this.ops !== this.cutAt) return 'go';
    const kept = op.op === 'write' ? this.rng.pick(op.length) : undefined;
    this.cut = { op: op.op, path: op.op === 'write' ? this.writing : op.path, at: this.ops, ...(kept !== undefined ? { kept, length: op.length } : {}) };
    this.cutNow?.();
    return kept ?? 'cut';
  };

  /**
   * A cut after the operation ran to its end without reaching the armed point (it made fewer
   * operations than its uncut run did): the power goes now, after its last one.
   */
  async cutAfter(board: SdkBoard): Promise<void> {
    if (this.cut) return;
    this.cut = { op: 'after the last operation', path: '', at: this.ops };
    this.cutAt = null;
    this.cutNow?.();
    await board.cutPower();
  }
}

export function boardAccess(b: SdkBoard, flashDir: string): BoardAccess {
  return {
    async http(method, path, o = {}) {
      const base = b.urls.ethernet;
      if (!base) throw new Error('the board does not listen on Ethernet');
      const res = await fetch(base + path, {
        method,
        headers: { ...o.headers, ...(o.body !== undefined && typeof o.body !== 'string' ? { 'content-type': 'application/json' } : {}) },
        ...(o.body !== undefined ? { body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body) } : {}),
      });
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => (headers[k] = v));
      return { status: res.status, headers, text, json } satisfies Answer;
    },
    files: () => flashFiles(flashDir),
  };
}

/** Every file of a flash folder, by firmware path. */
export function flashFiles(root: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  const walk = (dir: string, prefix: string) => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      if (d.isDirectory()) walk(join(dir, d.name), `${prefix}/${d.name}`);
      else if (d.isFile()) out.set(`${prefix}/${d.name}`, new Uint8Array(readFileSync(join(dir, d.name))));
    }
  };
  walk(root, '');
  return out;
}

export interface PowerUp {
  identity: DeviceIdentity;
  fuseKeyHex: string;
  flashDir: string;
  cutter: FlashCutter;
  air?: VirtualAir;
  /** No factory admin password (as a board comes out of a factory reset). */
  factoryPassword?: false;
}

/** Powers a board up on its flash folder, watched by its cutter; resolves once it has booted (BootFailure when a cut stopped the boot). */
export function powerUp(o: PowerUp): Promise<SdkBoard> {
  return startSdkBoard({
    identity: o.identity,
    fuseKeyHex: o.fuseKeyHex,
    flashDir: o.flashDir,
    ...(o.factoryPassword === false ? {} : { adminPassword: PASSWORD }),
    ...(o.air ? { air: o.air } : {}),
    panel: false,
    onFlashOp: o.cutter.watch,
  });
}

/**
 * A trial's restart: the board loses its power (if it has not yet) and is powered up again, its boot
 * cut at `armAt` (null: not); `replace` takes the new board. Resolves whether the cut happened.
 */
function restarter(me: PowerUp, current: () => SdkBoard, replace: (board: SdkBoard) => void): (armAt: number | null) => Promise<boolean> {
  return async (armAt) => {
    const board = current();
    await board.cutPower();
    await board.close();
    const r = await powerUpCut(me, armAt);
    replace(r.board);
    return r.cut;
  };
}

/**
 * Powers a board up with a cut armed at the `armAt`-th operation of its boot (null: none); a boot
 * that the cut stopped is powered up once more, uncut. Returns the board and whether its boot was cut.
 */
async function powerUpCut(o: PowerUp, armAt: number | null): Promise<{ board: SdkBoard; cut: boolean }> {
  o.cutter.arm(armAt);
  try {
    const board = await powerUp(o);
    o.cutter.arm(null);
    return { board, cut: false };
  } catch (err) {
    if (!o.cutter.cut) throw err;
  }
  o.cutter.arm(null);
  return { board: await powerUp(o), cut: true };
}

/** Runs `work` with the power armed; resolves once it has ended or the power has gone (its answer never comes). */
async function untilCut(cutter: FlashCutter, board: SdkBoard, work: () => Promise<unknown>): Promise<void> {
  const done = work().then(
    () => 'done' as const,
    () => 'failed' as const,
  );
  const how = await Promise.race([done, cutter.whenCut.then(() => 'cut' as const)]);
  if (how !== 'cut' && !cutter.cut) await cutter.cutAfter(board);
  await board.settled();
}

async function ok(a: BoardAccess, auth: Record<string, string>, method: string, path: string, body?: string | object, okStatus = [200, 201, 204, 404]): Promise<void> {
  const r = await a.http(method, path, { headers: auth, ...(body !== undefined ? { body } : {}) });
  if (!okStatus.includes(r.status)) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 200)}`);
}

interface XsScenario {
  name: string;
  /** Brings the board to this scenario's old state (the power on). */
  prep(a: BoardAccess, auth: Record<string, string>): Promise<void>;
  /** The operation cut. */
  act(a: BoardAccess, auth: Record<string, string>): Promise<unknown>;
}

function scenarios(cloudUrl: string): XsScenario[] {
  const reset = async (a: BoardAccess, auth: Record<string, string>) => {
    await ok(a, auth, 'PUT', API_PATHS.backup, OLD_BACKUP);
    await ok(a, auth, 'PUT', recordPath('controllers', 'ctl-a'), { name: 'A', ethernet_mac: '02:00:00:E0:00:0A' });
    await ok(a, auth, 'DELETE', recordPath('controllers', 'ctl-c'));
    await ok(a, auth, 'PUT', recordPath('clients', 'lamp-a'), clientConfig('02:00:00:C0:00:0A'));
    await ok(a, auth, 'PUT', recordPath('clients', 'lamp-b'), clientConfig('02:00:00:C0:00:0B'));
  };
  return [
    { name: 'local backup PUT (XS)', prep: reset, act: (a, auth) => a.http('PUT', API_PATHS.backup, { headers: auth, body: NEW_BACKUP }) },
    { name: 'record PUT (XS)', prep: reset, act: (a, auth) => a.http('PUT', recordPath('controllers', 'ctl-c'), { headers: auth, body: { name: 'C', ethernet_mac: '02:00:00:E0:00:0C' } }) },
    { name: 'record PUT replace (XS)', prep: reset, act: (a, auth) => a.http('PUT', recordPath('clients', 'lamp-a'), { headers: auth, body: { ...clientConfig('02:00:00:C0:00:AA'), note: 'replaced' } }) },
    { name: 'record DELETE (XS)', prep: reset, act: (a, auth) => a.http('DELETE', recordPath('clients', 'lamp-b'), { headers: auth }) },
    {
      name: 'cloud backup retrieve (XS)',
      prep: async (a, auth) => {
        await reset(a, auth);
        await ok(a, auth, 'PUT', API_PATHS.cloud, { url: cloudUrl });
      },
      act: (a, auth) => a.http('GET', API_PATHS.cloudBackup, { headers: auth }),
    },
  ];
}

export interface BoardContext {
  cloudUrl: string;
  enroll(uuid: string, publicKeyPem: string): Promise<void>;
  /** A fresh folder for a board's flash. */
  dir: string;
}

/**
 * `cuts` cuts on virtual boards: spread over the API scenarios, the boot (its repair and event log),
 * the target procedure and the console's factory reset, each cut at a seeded operation of the
 * operation's uncut run.
 */
export async function boardTrials(ctx: BoardContext, cuts: number, seed: number, progress: (r: TrialResult) => void): Promise<TrialResult[]> {
  const results: TrialResult[] = [];
  const rng = new PowerSwitch(seed ^ 0x5eed);
  const flashDir = join(ctx.dir, 'board-main');
  mkdirSync(flashDir, { recursive: true });
  const me: PowerUp = { identity: identity('pc-board', 1), fuseKeyHex: '41'.repeat(32), flashDir, cutter: new FlashCutter(seed) };
  let board = await powerUp(me);
  const a = () => boardAccess(board, flashDir);
  const restart = restarter(me, () => board, (b) => (board = b));
  try {
    // Once: the cloud knows the board and holds the new backup.
    let auth = await login(a());
    await ctx.enroll(me.identity.uuid, JSON.parse((await board.typeLine('pubkey')).slice(3)).public_key_pem as string);
    await ok(a(), auth, 'PUT', API_PATHS.cloud, { url: ctx.cloudUrl });
    await ok(a(), auth, 'PUT', API_PATHS.backup, NEW_BACKUP);
    await ok(a(), auth, 'POST', API_PATHS.cloudBackup, undefined, [200]);

    const list = scenarios(ctx.cloudUrl);
    // The uncut run of each scenario: its storage operations and its new state.
    const plans: { s: XsScenario; ops: number; old: FlashState; neu: FlashState }[] = [];
    for (const s of list) {
      auth = await login(a());
      await s.prep(a(), auth);
      const old = await snapshot(a(), auth);
      me.cutter.arm(null);
      await s.act(a(), auth);
      const ops = me.cutter.ops;
      if (ops === 0) throw new Error(`${s.name}: the file system saw no operation: the board's onFlashOp is not reached (firmware/sdk-host/modules/file.js, natives/fw_host_flash.c)`);
      await restart(null);
      const neu = await snapshot(a(), await login(a()));
      plans.push({ s, ops, old, neu });
    }
    // The boot itself: its repair, its event log lines.
    await board.cutPower();
    await board.close();
    me.cutter.arm(null);
    board = await powerUp(me);
    const bootOps = me.cutter.ops;

    const targetShare = Math.max(1, Math.floor(cuts / 6));
    const bootShare = Math.max(1, Math.floor(cuts / 6));
    const resetShare = Math.max(1, Math.floor(cuts / 8));
    for (let t = 0; t < cuts - targetShare - resetShare; t++) {
      if (t < bootShare) {
        const at = 1 + rng.pick(bootOps);
        const before = await snapshot(a(), await login(a()));
        await board.cutPower();
        await board.close();
        me.cutter.arm(at);
        try {
          const b = await powerUp(me);
          // This boot made fewer operations than the one counted: the power goes after its last.
          await me.cutter.cutAfter(b);
          await b.close();
        } catch (err) {
          if (!me.cutter.cut) throw err;
        }
        const cut = me.cutter.cut;
        me.cutter.arm(null);
        board = await powerUp(me);
        const problems = await checkRecovered(a(), before, before);
        results.push(done('boot: repair and event log (XS)', 1, problems, cut, flashDir));
        progress(results[results.length - 1]!);
        continue;
      }
      const p = plans[t % plans.length]!;
      auth = await login(a());
      await p.s.prep(a(), auth);
      const at = 1 + ((t * 7 + rng.pick(p.ops)) % p.ops);
      me.cutter.arm(at);
      await untilCut(me.cutter, board, () => p.s.act(a(), auth));
      const cut = me.cutter.cut;
      // Sometimes the boot after the cut is cut too (its repair, its log lines).
      const second = t % 3 === 0 ? 1 + rng.pick(6) : null;
      const recoveryCut = await restart(second);
      const problems = await checkRecovered(a(), p.old, p.neu);
      results.push(done(p.s.name, recoveryCut ? 2 : 1, problems, cut, flashDir));
      progress(results[results.length - 1]!);
    }
    for (const r of await targetTrials(ctx, targetShare, seed)) {
      results.push(r);
      progress(r);
    }
    for (const r of await factoryResetTrials(ctx, resetShare, seed)) {
      results.push(r);
      progress(r);
    }
  } finally {
    await board.close();
  }
  return results;
}

function done(scenario: string, cuts: number, problems: string[], cut: Cut | null, flashDir: string): TrialResult {
  const where = cut ? `${cut.op}${cut.path ? ` ${cut.path}` : ''}${cut.kept !== undefined ? ` (${cut.kept} of ${cut.length} bytes written)` : ''} (operation ${cut.at})` : 'nothing';
  if (problems.length === 0) return { scenario, cuts, problems, where };
  return { scenario, cuts, where, problems: [`cut during ${where}: ${problems.join('; ')}; flash: ${describeFiles(flashFiles(flashDir))}`] };
}

/**
 * The serial console's factory-reset on a virtual board (docs/storage.md, "Factory reset"), typed
 * on its console: from records, a backup, a cloud URL and an admin password set on the console, a
 * cut anywhere leaves, after the next boot, all of it or none of it (the whole flash but the event
 * log, byte for byte), then the usual checks. The board has no factory password: a finished reset
 * leaves none, and the console sets it again so the API can be read.
 */
async function factoryResetTrials(ctx: BoardContext, cuts: number, seed: number): Promise<TrialResult[]> {
  const flashDir = join(ctx.dir, 'board-reset');
  mkdirSync(flashDir, { recursive: true });
  const me: PowerUp = { identity: identity('pc-board-reset', 4), fuseKeyHex: '44'.repeat(32), flashDir, cutter: new FlashCutter(seed ^ 0xfac7), factoryPassword: false };
  const rng = new PowerSwitch(seed ^ 0x4e5e7);
  let board = await powerUp(me);
  const a = () => boardAccess(board, flashDir);
  const out: TrialResult[] = [];
  const restart = restarter(me, () => board, (b) => (board = b));
  const ensurePassword = async () => {
    if (flashFiles(flashDir).has(PASSWORD_PATH)) return;
    const answer = await board.typeLine(`password ${PASSWORD}`);
    if (!answer.startsWith('OK ')) throw new Error(`password: ${answer}`);
  };
  const prep = async () => {
    await ensurePassword();
    const auth = await login(a());
    await ok(a(), auth, 'PUT', API_PATHS.backup, OLD_BACKUP);
    await ok(a(), auth, 'PUT', recordPath('controllers', 'ctl-a'), { name: 'A', ethernet_mac: '02:00:00:E0:00:0A' });
    await ok(a(), auth, 'PUT', recordPath('clients', 'lamp-a'), clientConfig('02:00:00:C0:00:0A'));
    await ok(a(), auth, 'PUT', recordPath('clients', 'lamp-b'), clientConfig('02:00:00:C0:00:0B'));
    await ok(a(), auth, 'PUT', API_PATHS.cloud, { url: ctx.cloudUrl });
    return { old: await snapshot(a(), auth), oldWhole: durableState(flashFiles(flashDir)) };
  };
  try {
    // The uncut reset: its storage operations and the state it leaves. The power goes once the
    // console has answered (the firmware would reboot itself a moment later).
    await prep();
    me.cutter.arm(null);
    const answer = await board.typeLine('factory-reset');
    if (!answer.startsWith('OK ')) throw new Error(`factory-reset: ${answer}`);
    const ops = me.cutter.ops;
    await restart(null);
    const neuWhole = durableState(flashFiles(flashDir));
    await ensurePassword();
    const neu = await snapshot(a(), await login(a()));

    for (let t = 0; t < cuts; t++) {
      const { old, oldWhole } = await prep();
      const at = 1 + ((t * 5 + rng.pick(ops)) % ops);
      me.cutter.arm(at);
      await untilCut(me.cutter, board, () => board.typeLine('factory-reset'));
      const cut = me.cutter.cut;
      // Every other time the boot after the cut is cut too, early: while it finishes the reset.
      const recoveryCut = await restart(t % 2 === 1 ? 1 + rng.pick(6) : null);
      const problems = wholeStateProblems(flashFiles(flashDir), oldWhole, neuWhole);
      await ensurePassword();
      problems.push(...(await checkRecovered(a(), old, neu)));
      out.push(done('factory reset (XS)', recoveryCut ? 2 : 1, problems, cut, flashDir));
    }
  } finally {
    await board.close();
  }
  return out;
}

/** Spec 3.6 on a virtual target, from a source board over the virtual air. */
async function targetTrials(ctx: BoardContext, cuts: number, seed: number): Promise<TrialResult[]> {
  const air = new VirtualAir();
  const sourceDir = join(ctx.dir, 'board-source');
  const source = await powerUp({ identity: identity('pc-board-source', 2), fuseKeyHex: '42'.repeat(32), flashDir: sourceDir, cutter: new FlashCutter(1), air });
  const out: TrialResult[] = [];
  const target = identity('pc-board-target', 3);
  const rng = new PowerSwitch(seed ^ 0x7a7);
  const targetAt = (dir: string, cutter: FlashCutter, inRange: boolean): PowerUp => ({ identity: target, fuseKeyHex: '43'.repeat(32), flashDir: dir, cutter, ...(inRange ? { air } : {}) });
  try {
    const sa = boardAccess(source, sourceDir);
    const sauth = await login(sa);
    await ok(sa, sauth, 'PUT', recordPath('controllers', target.uuid), { name: 'target', ethernet_mac: target.ethernetMac });
    await ok(sa, sauth, 'PUT', recordPath('controllers', 'ctl-a'), { name: 'A', ethernet_mac: '02:00:00:E0:00:0A' });
    await ok(sa, sauth, 'PUT', recordPath('clients', 'lamp-a'), clientConfig('02:00:00:C0:00:0A'));
    await ok(sa, sauth, 'PUT', recordPath('clients', 'lamp-b'), clientConfig('02:00:00:C0:00:0B'));
    await ok(sa, sauth, 'PUT', API_PATHS.backup, NEW_BACKUP);
    await ok(sa, sauth, 'PUT', API_PATHS.provisioning, undefined, [200]);
    const neu = await snapshot(sa, sauth);
    const old: FlashState = { backup: null, records: { controllers: {}, clients: {} } };

    // One uncut provisioning: how many storage operations it makes.
    const count = new FlashCutter(seed);
    const dry = await powerUp(targetAt(join(ctx.dir, 'board-target-dry'), count, true));
    const dryResult = dry.bootResult as { provisioning?: { kind: string; ok?: boolean } };
    await dry.close();
    if (!(dryResult.provisioning?.kind === 'finished' && dryResult.provisioning.ok)) throw new Error(`the uncut target procedure did not provision: ${JSON.stringify(dryResult)}`);
    const ops = count.ops;

    for (let t = 0; t < cuts; t++) {
      const dir = join(ctx.dir, `board-target-${t}`);
      const cutter = new FlashCutter(seed + t);
      const at = 1 + ((t * 13 + rng.pick(ops)) % ops);
      cutter.arm(at);
      try {
        const b = await powerUp(targetAt(dir, cutter, true));
        // The procedure made fewer operations than its uncut run: the power goes after the last.
        await cutter.cutAfter(b);
        await b.close();
      } catch (err) {
        if (!cutter.cut) throw err;
      }
      const cut = cutter.cut;
      cutter.arm(null);
      // Powered up away from the source: what the cut left, repaired.
      const again = await powerUp(targetAt(dir, cutter, false));
      let problems: string[];
      try {
        const ta = boardAccess(again, dir);
        const status = await ta.http('GET', API_PATHS.status, { headers: await login(ta) });
        problems = await checkRecovered(ta, old, neu, status.json?.configured === true ? { mustBe: neu } : {});
      } finally {
        await again.close();
      }
      // And in range of the source again, it provisions completely (or is already configured).
      if (problems.length === 0) {
        const third = await powerUp(targetAt(dir, cutter, true));
        try {
          const r = third.bootResult as { provisioning?: { kind: string; ok?: boolean } };
          if (!(r.provisioning?.kind === 'configured' || (r.provisioning?.kind === 'finished' && r.provisioning.ok))) problems.push(`provisioning again: ${JSON.stringify(r.provisioning)}`);
          else problems.push(...(await checkRecovered(boardAccess(third, dir), old, neu, { mustBe: neu })));
        } finally {
          await third.close();
        }
      }
      out.push(done('target procedure wipe and copy (XS)', 1, problems, cut, dir));
    }
  } finally {
    await source.close();
  }
  return out;
}
