// Power cuts on virtual boards: the firmware in the real XS engine, its flash a FlashFolder (real
// files) with a PowerSwitch. Fewer cuts than on the memory platform (each costs a board start), but
// the same checks (common.ts), so that both flash layers are proven. One board's flash is cut again
// and again: each trial brings it to a known old state, cuts one operation, powers the board up
// again on the same folder and checks it.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { XsBoard } from '../../firmware/virtual-esp32/xs-board.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { PowerSwitch } from '../../firmware/src/platform/memory/power-cut.ts';
import { clientConfig } from '../../firmware/test-cases/fixtures.ts';
import { checkRecovered, controllerIdentity, describeFiles, durableState, login, wholeStateProblems, NEW_BACKUP, OLD_BACKUP, PASSWORD, snapshot, type Answer, type BoardAccess, type FlashState } from './common.ts';
import type { TrialResult } from './memory.ts';

const identity = (uuid: string, n: number) => controllerIdentity(uuid, n, 'xs');

export function xsAccess(b: XsBoard, flashDir: string): BoardAccess {
  return {
    async http(method, path, o = {}) {
      const res = await fetch(b.urls.ethernet + path, {
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

/** Every file of a flash folder, by firmware path (the OTA partition's files excluded). */
export function flashFiles(root: string): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  const walk = (dir: string, prefix: string) => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      if (d.isDirectory() && !(prefix === '' && d.name === '.ota')) walk(join(dir, d.name), `${prefix}/${d.name}`);
      else if (d.isFile()) out.set(`${prefix}/${d.name}`, new Uint8Array(readFileSync(join(dir, d.name))));
    }
  };
  walk(root, '');
  return out;
}

/**
 * A board on a flash folder whose power the switch controls; not booted yet. `factoryPassword:
 * false`: no factory admin password (as a board comes out of a factory reset).
 */
async function powerUp(o: { identity: DeviceIdentity; fuseKeyHex: string; flashDir: string; power: PowerSwitch; air?: VirtualAir; factoryPassword?: false }): Promise<XsBoard> {
  // `flash` reaches the board's FlashFolder (FlashFolderOptions); built apart so it type-checks
  // whether or not this version of XsBoardOptions names it.
  const options = { identity: o.identity, fuseKeyHex: o.fuseKeyHex, flashDir: o.flashDir, ...(o.factoryPassword === false ? {} : { adminPassword: PASSWORD }), deferBoot: true, flash: { power: o.power }, ...(o.air ? { air: o.air } : {}) };
  return XsBoard.start(options);
}

interface XsScenario {
  name: string;
  /** Brings the board to this scenario's old state (the power on). */
  prep(a: BoardAccess, auth: Record<string, string>): Promise<void>;
  /** The operation cut. */
  act(a: BoardAccess, auth: Record<string, string>): Promise<unknown>;
}

/**
 * Powers a board off and up again with a cut armed at the `armAt`-th flash operation (null: none)
 * and boots it; a boot that the cut interrupted is powered up once more, uncut. Returns the new board
 * and whether the boot was cut.
 */
async function restartWithCut(old: XsBoard, start: () => Promise<XsBoard>, power: PowerSwitch, armAt: number | null): Promise<{ board: XsBoard; cut: boolean }> {
  await old.close();
  power.restore();
  const board = await start();
  power.arm(armAt);
  try {
    await board.boot();
  } catch {
    /* cut while booting */
  }
  if (power.off) return { board: (await restartWithCut(board, start, power, null)).board, cut: true };
  power.arm(null);
  return { board, cut: false };
}

async function ok(a: BoardAccess, auth: Record<string, string>, method: string, path: string, body?: string | object, okStatus = [200, 201, 204, 404]): Promise<void> {
  const r = await a.http(method, path, { headers: auth, ...(body !== undefined ? { body } : {}) });
  if (!okStatus.includes(r.status)) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 200)}`);
}

function scenarios(cloudUrl: string): XsScenario[] {
  const reset = async (a: BoardAccess, auth: Record<string, string>) => {
    await ok(a, auth, 'PUT', '/backup', OLD_BACKUP);
    await ok(a, auth, 'PUT', '/api/controllers/ctl-a', { name: 'A', ethernet_mac: '02:00:00:E0:00:0A' });
    await ok(a, auth, 'DELETE', '/api/controllers/ctl-c');
    await ok(a, auth, 'PUT', '/api/clients/lamp-a', clientConfig('02:00:00:C0:00:0A'));
    await ok(a, auth, 'PUT', '/api/clients/lamp-b', clientConfig('02:00:00:C0:00:0B'));
  };
  return [
    { name: 'local backup PUT (XS)', prep: reset, act: (a, auth) => a.http('PUT', '/backup', { headers: auth, body: NEW_BACKUP }) },
    { name: 'record PUT (XS)', prep: reset, act: (a, auth) => a.http('PUT', '/api/controllers/ctl-c', { headers: auth, body: { name: 'C', ethernet_mac: '02:00:00:E0:00:0C' } }) },
    { name: 'record PUT replace (XS)', prep: reset, act: (a, auth) => a.http('PUT', '/api/clients/lamp-a', { headers: auth, body: { ...clientConfig('02:00:00:C0:00:AA'), note: 'replaced' } }) },
    { name: 'record DELETE (XS)', prep: reset, act: (a, auth) => a.http('DELETE', '/api/clients/lamp-b', { headers: auth }) },
    {
      name: 'cloud backup retrieve (XS)',
      prep: async (a, auth) => {
        await reset(a, auth);
        await ok(a, auth, 'PUT', '/api/cloud', { url: cloudUrl });
      },
      act: (a, auth) => a.http('GET', '/api/cloud-backup', { headers: auth }),
    },
  ];
}

export interface XsContext {
  cloudUrl: string;
  enroll(uuid: string, publicKeyPem: string): Promise<void>;
  /** A fresh folder for a board's flash. */
  dir: string;
}

/**
 * `cuts` cuts on virtual boards: spread over the API scenarios, the boot (its repair and event log)
 * and the target procedure, each cut at a seeded operation of the operation's uncut run.
 */
export async function xsTrials(ctx: XsContext, cuts: number, seed: number, progress: (r: TrialResult) => void): Promise<TrialResult[]> {
  const results: TrialResult[] = [];
  const rng = new PowerSwitch(seed ^ 0x5eed);
  const me = identity('pc-xs', 1);
  const fuse = '41'.repeat(32);
  const flashDir = join(ctx.dir, 'xs-main');
  mkdirSync(flashDir, { recursive: true });
  const power = new PowerSwitch(seed);
  let board = await powerUp({ identity: me, fuseKeyHex: fuse, flashDir, power });
  await board.boot();
  const a = () => xsAccess(board, flashDir);
  try {
    // Once: the cloud knows the board and holds the new backup.
    let auth = await login(a());
    await ctx.enroll(me.uuid, JSON.parse((await board.typeLine('pubkey')).slice(3)).public_key_pem as string);
    await ok(a(), auth, 'PUT', '/api/cloud', { url: ctx.cloudUrl });
    await ok(a(), auth, 'PUT', '/backup', NEW_BACKUP);
    await ok(a(), auth, 'POST', '/api/cloud-backup', undefined, [200]);

    const list = scenarios(ctx.cloudUrl);
    const restart = async (armAt: number | null): Promise<boolean> => {
      const r = await restartWithCut(board, () => powerUp({ identity: me, fuseKeyHex: fuse, flashDir, power }), power, armAt);
      board = r.board;
      return r.cut;
    };
    // The uncut run of each scenario: its storage operations and its new state.
    const plans: { s: XsScenario; ops: number; old: FlashState; neu: FlashState }[] = [];
    for (const s of list) {
      auth = await login(a());
      await s.prep(a(), auth);
      const old = await snapshot(a(), auth);
      power.arm(null);
      await s.act(a(), auth);
      const ops = power.ops;
      if (ops === 0) throw new Error('the virtual board\'s flash saw no operation: XsBoard must pass its `flash` option to the FlashFolder (new FlashFolder(o.flashDir, o.flash))');
      await restart(null);
      const neu = await snapshot(a(), await login(a()));
      plans.push({ s, ops, old, neu });
    }
    // The boot itself: its repair, its event log lines.
    power.arm(null);
    await restart(null);
    const bootOps = power.ops;

    const targetShare = Math.max(1, Math.floor(cuts / 6));
    const bootShare = Math.max(1, Math.floor(cuts / 6));
    const resetShare = Math.max(1, Math.floor(cuts / 8));
    for (let t = 0; t < cuts - targetShare - resetShare; t++) {
      if (t < bootShare) {
        const at = 1 + rng.pick(bootOps);
        const before = await snapshot(a(), await login(a()));
        await board.close();
        power.restore();
        board = await powerUp({ identity: me, fuseKeyHex: fuse, flashDir, power });
        power.arm(at);
        try {
          await board.boot();
        } catch {
          /* cut */
        }
        const cut = power.cut;
        await restart(null);
        const problems = cut ? await checkRecovered(a(), before, before) : [`no cut at boot operation ${at} of ${bootOps}`];
        results.push(done('boot: repair and event log (XS)', cut ? 1 : 0, problems, cut, flashDir));
        progress(results[results.length - 1]!);
        continue;
      }
      const p = plans[t % plans.length]!;
      auth = await login(a());
      await p.s.prep(a(), auth);
      const at = 1 + ((t * 7 + rng.pick(p.ops)) % p.ops);
      power.arm(at);
      try {
        await p.s.act(a(), auth);
      } catch {
        /* the board lost its power mid-answer */
      }
      const cut = power.cut;
      // Sometimes the boot after the cut is cut too (its repair, its log lines).
      const second = t % 3 === 0 ? 1 + rng.pick(6) : null;
      const recoveryCut = await restart(second);
      const problems = cut ? await checkRecovered(a(), p.old, p.neu) : [`no cut at operation ${at} of ${p.ops}`];
      results.push(done(p.s.name, cut ? (recoveryCut ? 2 : 1) : 0, problems, cut, flashDir));
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

function done(scenario: string, cuts: number, problems: string[], cut: PowerSwitch['cut'], flashDir: string): TrialResult {
  if (problems.length === 0) return { scenario, cuts, problems };
  return { scenario, cuts, problems: [`cut during ${cut ? `${cut.op} ${cut.path} (operation ${cut.at})` : 'nothing'}: ${problems.join('; ')}; flash: ${describeFiles(flashFiles(flashDir))}`] };
}

/**
 * The serial console's factory-reset on a virtual board (docs/storage.md, "Factory reset"), typed
 * on its console: from records, a backup, a cloud URL and an admin password set on the console, a
 * cut anywhere leaves, after the next boot, all of it or none of it (the whole flash but the event
 * log, byte for byte), then the usual checks. The board has no factory password: a finished reset
 * leaves none, and the console sets it again so the API can be read.
 */
async function factoryResetTrials(ctx: XsContext, cuts: number, seed: number): Promise<TrialResult[]> {
  const me = identity('pc-xs-reset', 4);
  const fuse = '44'.repeat(32);
  const flashDir = join(ctx.dir, 'xs-reset');
  mkdirSync(flashDir, { recursive: true });
  const power = new PowerSwitch(seed ^ 0xfac7);
  const rng = new PowerSwitch(seed ^ 0x4e5e7);
  const start = () => powerUp({ identity: me, fuseKeyHex: fuse, flashDir, power, factoryPassword: false });
  let board = await start();
  const a = () => xsAccess(board, flashDir);
  const out: TrialResult[] = [];
  const restart = async (armAt: number | null): Promise<boolean> => {
    const r = await restartWithCut(board, start, power, armAt);
    board = r.board;
    return r.cut;
  };
  const ensurePassword = async () => {
    if (flashFiles(flashDir).has('/config/admin-password')) return;
    const answer = await board.typeLine(`password ${PASSWORD}`);
    if (!answer.startsWith('OK ')) throw new Error(`password: ${answer}`);
  };
  const prep = async () => {
    await ensurePassword();
    const auth = await login(a());
    await ok(a(), auth, 'PUT', '/backup', OLD_BACKUP);
    await ok(a(), auth, 'PUT', '/api/controllers/ctl-a', { name: 'A', ethernet_mac: '02:00:00:E0:00:0A' });
    await ok(a(), auth, 'PUT', '/api/clients/lamp-a', clientConfig('02:00:00:C0:00:0A'));
    await ok(a(), auth, 'PUT', '/api/clients/lamp-b', clientConfig('02:00:00:C0:00:0B'));
    await ok(a(), auth, 'PUT', '/api/cloud', { url: ctx.cloudUrl });
    return { old: await snapshot(a(), auth), oldWhole: durableState(flashFiles(flashDir)) };
  };
  try {
    await board.boot();
    // The uncut reset: its storage operations and the state it leaves.
    await prep();
    power.arm(null);
    const answer = await board.typeLine('factory-reset');
    if (!answer.startsWith('OK ')) throw new Error(`factory-reset: ${answer}`);
    const ops = power.ops;
    await restart(null);
    const neuWhole = durableState(flashFiles(flashDir));
    await ensurePassword();
    const neu = await snapshot(a(), await login(a()));

    for (let t = 0; t < cuts; t++) {
      const { old, oldWhole } = await prep();
      const at = 1 + ((t * 5 + rng.pick(ops)) % ops);
      power.arm(at);
      try {
        await board.typeLine('factory-reset');
      } catch {
        /* no answer: the board lost its power */
      }
      const cut = power.cut;
      // Every other time the boot after the cut is cut too, early: while it finishes the reset.
      const recoveryCut = await restart(t % 2 === 1 ? 1 + rng.pick(6) : null);
      let problems: string[];
      if (!cut) problems = [`no cut at operation ${at} of ${ops}`];
      else {
        problems = wholeStateProblems(flashFiles(flashDir), oldWhole, neuWhole);
        await ensurePassword();
        problems.push(...(await checkRecovered(a(), old, neu)));
      }
      out.push(done('factory reset (XS)', cut ? (recoveryCut ? 2 : 1) : 0, problems, cut, flashDir));
    }
  } finally {
    await board.close();
  }
  return out;
}

/** Spec 3.6 on a virtual target in XS, from a source board over the virtual air. */
async function targetTrials(ctx: XsContext, cuts: number, seed: number): Promise<TrialResult[]> {
  const air = new VirtualAir();
  const sourceDir = join(ctx.dir, 'xs-source');
  const source = await powerUp({ identity: identity('pc-xs-source', 2), fuseKeyHex: '42'.repeat(32), flashDir: sourceDir, power: new PowerSwitch(1), air });
  const out: TrialResult[] = [];
  const target = identity('pc-xs-target', 3);
  const rng = new PowerSwitch(seed ^ 0x7a7);
  try {
    await source.boot();
    const sa = xsAccess(source, sourceDir);
    const sauth = await login(sa);
    await ok(sa, sauth, 'PUT', `/api/controllers/${target.uuid}`, { name: 'target', ethernet_mac: target.ethernetMac });
    await ok(sa, sauth, 'PUT', '/api/controllers/ctl-a', { name: 'A', ethernet_mac: '02:00:00:E0:00:0A' });
    await ok(sa, sauth, 'PUT', '/api/clients/lamp-a', clientConfig('02:00:00:C0:00:0A'));
    await ok(sa, sauth, 'PUT', '/api/clients/lamp-b', clientConfig('02:00:00:C0:00:0B'));
    await ok(sa, sauth, 'PUT', '/backup', NEW_BACKUP);
    await ok(sa, sauth, 'PUT', '/api/provisioning', undefined, [200]);
    const neu = await snapshot(sa, sauth);
    const old: FlashState = { backup: null, records: { controllers: {}, clients: {} } };

    // One uncut provisioning: how many storage operations it makes.
    const count = new PowerSwitch(seed);
    const dryDir = join(ctx.dir, 'xs-target-dry');
    const dry = await powerUp({ identity: target, fuseKeyHex: '43'.repeat(32), flashDir: dryDir, power: count, air });
    await dry.boot();
    await dry.close();
    const ops = count.ops;

    for (let t = 0; t < cuts; t++) {
      const dir = join(ctx.dir, `xs-target-${t}`);
      const power = new PowerSwitch(seed + t);
      const b = await powerUp({ identity: target, fuseKeyHex: '43'.repeat(32), flashDir: dir, power, air });
      const at = 1 + ((t * 13 + rng.pick(ops)) % ops);
      power.arm(at);
      try {
        await b.boot();
      } catch {
        /* cut */
      }
      const cut = power.cut;
      await b.close();
      power.restore();
      // Powered up away from the source: what the cut left, repaired.
      const again = await powerUp({ identity: target, fuseKeyHex: '43'.repeat(32), flashDir: dir, power });
      let problems: string[];
      try {
        await again.boot();
        const ta = xsAccess(again, dir);
        const status = await ta.http('GET', '/api/status', { headers: await login(ta) });
        problems = cut ? await checkRecovered(ta, old, neu, status.json?.configured === true ? { mustBe: neu } : {}) : [`no cut at operation ${at} of ${ops}`];
      } finally {
        await again.close();
      }
      // And in range of the source again, it provisions completely (or is already configured).
      if (problems.length === 0) {
        const third = await powerUp({ identity: target, fuseKeyHex: '43'.repeat(32), flashDir: dir, power, air });
        try {
          const r = (await third.boot()) as { provisioning?: { kind: string; ok?: boolean } };
          if (!(r.provisioning?.kind === 'configured' || (r.provisioning?.kind === 'finished' && r.provisioning.ok))) problems.push(`provisioning again: ${JSON.stringify(r.provisioning)}`);
          else problems.push(...(await checkRecovered(xsAccess(third, dir), old, neu, { mustBe: neu })));
        } finally {
          await third.close();
        }
      }
      out.push(done('target procedure wipe and copy (XS)', cut ? 1 : 0, problems, cut, dir));
    }
  } finally {
    await source.close();
  }
  return out;
}
