// Power cuts on the in-memory platform (fast: the bulk of the cuts). Each trial builds a board in a
// known "old" state on a MemoryStorage with a PowerSwitch, cuts the power during the n-th storage
// operation of one scenario's operation, boots the board again on the same flash (sometimes cutting
// that boot too), and checks what it holds (common.ts). The "new" state and the number of storage
// operations come from the same operation run once without a cut.
import { request as httpRequest } from 'node:http';
import type { ClientRequest, ClientResponse } from '../../firmware/src/hal/network.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { Device } from '../../firmware/src/core/device.ts';
import { EVENT_LOG_CAPACITY } from '../../firmware/src/core/event-log.ts';
import { toBodyReader } from '../../firmware/src/core/http/respond.ts';
import { MemoryAir } from '../../firmware/src/platform/memory/air.ts';
import { createMemoryBoard } from '../../firmware/src/platform/memory/board.ts';
import { ManualClock } from '../../firmware/src/platform/memory/clock.ts';
import { PowerSwitch } from '../../firmware/src/platform/memory/power-cut.ts';
import { MemoryStorage } from '../../firmware/src/platform/memory/storage.ts';
import { call, clientConfig, type TestBoard } from '../../firmware/test-cases/fixtures.ts';
import { writeFileAtomically } from '../../firmware/src/core/flash.ts';
import { PROVISIONING_INCOMPLETE_PATH } from '../../firmware/src/core/provisioning/target.ts';
import { checkRecovered, controllerIdentity, describeFiles, durableState, login, wholeStateProblems, NEW_BACKUP, OLD_BACKUP, PASSWORD, snapshot, type BoardAccess, type FlashState } from './common.ts';
import { API_PATHS, recordPath } from '../../firmware/src/core/api-paths.ts';

export interface Tally {
  injected: number;
  recovered: number;
  lost: number;
}

export interface TrialResult {
  scenario: string;
  cuts: number;
  problems: string[];
  /** Where the power went (virtual boards): the operation, its path, its number. */
  where?: string;
}

const identity = (uuid: string, n: number) => controllerIdentity(uuid, n, 'memory');

let boardSeed = 1;

/**
 * One power-up of a board: a new Device (new RAM) on the given flash; `factoryPassword: false`
 * boots it without a factory admin password (as a board comes out of a factory reset).
 */
function powerUp(o: { identity: DeviceIdentity; fuseKeyHex: string; storage: MemoryStorage; air?: MemoryAir; clock?: ManualClock; internet?: (r: ClientRequest) => Promise<ClientResponse>; factoryPassword?: false }): TestBoard {
  const mb = createMemoryBoard({
    identity: o.identity,
    fuseKeyHex: o.fuseKeyHex,
    air: o.air ?? new MemoryAir(),
    clock: o.clock ?? new ManualClock(Date.now()),
    storage: o.storage,
    seed: boardSeed++,
    ...(o.internet ? { internet: o.internet } : {}),
  });
  return { ...mb, identity: o.identity, device: new Device(mb.hal, o.factoryPassword === false ? {} : { initialAdminPassword: PASSWORD }) };
}

export function access(tb: TestBoard): BoardAccess {
  return {
    http: (method, path, o = {}) => call(tb, method, path, { ...(o.headers ? { headers: o.headers } : {}), ...(o.body !== undefined ? { body: o.body } : {}), chunkBytes: 4096 }),
    files: () => new Map(tb.storage.files),
  };
}

/** The board's requests to anything but a SoftAP of its air: real HTTP to a loopback server (the cloud). */
export function loopbackInternet(req: ClientRequest): Promise<ClientResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(req.url);
    const headers: Record<string, string> = { ...req.headers };
    const length = req.body instanceof Uint8Array ? req.body.length : (req.bodyLength ?? 0);
    if (req.body !== undefined) headers['content-length'] = String(length);
    const r = httpRequest(url, { method: req.method, headers }, (res) => {
      const chunks = res[Symbol.asyncIterator]();
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') out[k] = v;
      resolve({ status: res.statusCode ?? 0, headers: out, body: { read: async () => { const n = await chunks.next(); return n.done ? null : new Uint8Array(n.value as Buffer); } } });
    });
    r.on('error', reject);
    void (async () => {
      const body = toBodyReader(req.body);
      for (let c = await body.read(); c !== null; c = await body.read()) r.write(c);
      r.end();
    })().catch(reject);
  });
}

/** A scenario: how to bring a fresh flash to the "old" state, and the operation to cut. */
interface Scenario {
  name: string;
  /** Share of the cuts. */
  weight: number;
  /**
   * A booted board in the old state; `act` is the operation cut; `boot` powers the same board up
   * again; `check` (optional) checks beyond old-or-new, on the board booted again after the cut.
   */
  setup(storage: MemoryStorage): Promise<Setup>;
  /** Whether the board may say it is configured only with the complete new state. */
  configuredMeansNew?: boolean;
  /**
   * All or nothing: after the cut the whole durable state (every file but the event log, byte for
   * byte) must be the old one or the new one, not some items old and others new.
   */
  wholeState?: boolean;
}

interface Setup {
  board: TestBoard;
  act: (b: TestBoard) => Promise<unknown>;
  boot: (storage: MemoryStorage) => TestBoard;
  check?: (b: TestBoard) => Promise<string[]>;
  /** Right after every boot that is checked (after the whole state is taken): e.g. set a password again. */
  afterBoot?: (b: TestBoard) => Promise<void>;
}

export interface MemoryContext {
  /** A cloud on loopback: its URL, and how to enroll a public key. */
  cloudUrl: string;
  enroll(uuid: string, publicKeyPem: string): Promise<void>;
}

/** A booted board on `storage`, logged in; `online` boards reach the cloud on loopback. */
async function basicBoard(storage: MemoryStorage, uuid: string, n: number, fuse: string, online = false) {
  const id = identity(uuid, n);
  const boot = (s: MemoryStorage) => powerUp({ identity: id, fuseKeyHex: fuse, storage: s, ...(online ? { internet: loopbackInternet } : {}) });
  const board = boot(storage);
  await board.device.boot();
  return { board, boot, auth: await login(access(board)) };
}

async function put(tb: TestBoard, auth: Record<string, string>, path: string, body: string | object): Promise<void> {
  const r = await call(tb, 'PUT', path, { headers: auth, body, chunkBytes: 4096 });
  if (r.status >= 300) throw new Error(`PUT ${path}: ${r.status} ${r.text.slice(0, 200)}`);
}

async function seedRecords(tb: TestBoard, auth: Record<string, string>): Promise<void> {
  await put(tb, auth, recordPath('controllers', 'ctl-a'), { name: 'A', ethernet_mac: '02:00:00:E0:00:0A' });
  await put(tb, auth, recordPath('controllers', 'ctl-b'), { name: 'B', ethernet_mac: '02:00:00:E0:00:0B' });
  await put(tb, auth, recordPath('clients', 'lamp-a'), clientConfig('02:00:00:C0:00:0A'));
  await put(tb, auth, recordPath('clients', 'lamp-b'), clientConfig('02:00:00:C0:00:0B'));
}

export function memoryScenarios(ctx: MemoryContext): Scenario[] {
  const requestOk = (path: string, method = 'PUT', body?: string | object) => async (b: TestBoard) => {
    const auth = await login(access(b));
    return call(b, method, path, { headers: auth, ...(body !== undefined ? { body } : {}), chunkBytes: 4096 });
  };
  const enrolled = new Set<string>();
  return [
    {
      name: 'local backup PUT',
      weight: 3,
      async setup(storage) {
        const { board, boot, auth } = await basicBoard(storage, 'pc-backup', 1, '31'.repeat(32));
        await put(board, auth, API_PATHS.backup, OLD_BACKUP);
        return { board, boot, act: requestOk(API_PATHS.backup, 'PUT', NEW_BACKUP) };
      },
    },
    {
      name: 'cloud backup retrieve',
      weight: 2,
      async setup(storage) {
        const fuse = '32'.repeat(32);
        const { board, boot, auth } = await basicBoard(storage, 'pc-retrieve', 2, fuse, true);
        await put(board, auth, API_PATHS.cloud, { url: ctx.cloudUrl });
        if (!enrolled.has(fuse)) {
          // Once: the cloud learns the board's key and holds the new backup, pushed by the board.
          await ctx.enroll(board.identity.uuid, board.device.publicKeyPem());
          await put(board, auth, API_PATHS.backup, NEW_BACKUP);
          const push = await call(board, 'POST', API_PATHS.cloudBackup, { headers: auth });
          if (push.status !== 200) throw new Error(`cloud push: ${push.status} ${push.text}`);
          enrolled.add(fuse);
        }
        await put(board, auth, API_PATHS.backup, OLD_BACKUP);
        return {
          board,
          boot,
          act: async (b) => {
            const r = await requestOk(API_PATHS.cloudBackup, 'GET')(b);
            if (r.status !== 200 && !b.storage.power?.off) throw new Error(`retrieve: ${r.status} ${r.text}`);
          },
        };
      },
    },
    {
      name: 'record PUT (new controller)',
      weight: 2,
      async setup(storage) {
        const { board, boot, auth } = await basicBoard(storage, 'pc-records', 3, '33'.repeat(32));
        await seedRecords(board, auth);
        return { board, boot, act: requestOk(recordPath('controllers', 'ctl-c'), 'PUT', { name: 'C', ethernet_mac: '02:00:00:E0:00:0C' }) };
      },
    },
    {
      name: 'record PUT (client replaced)',
      weight: 2,
      async setup(storage) {
        const { board, boot, auth } = await basicBoard(storage, 'pc-records', 3, '33'.repeat(32));
        await seedRecords(board, auth);
        return { board, boot, act: requestOk(recordPath('clients', 'lamp-a'), 'PUT', { ...clientConfig('02:00:00:C0:00:AA'), note: 'replaced' }) };
      },
    },
    {
      name: 'record DELETE',
      weight: 1,
      async setup(storage) {
        const { board, boot, auth } = await basicBoard(storage, 'pc-records', 3, '33'.repeat(32));
        await seedRecords(board, auth);
        return { board, boot, act: requestOk(recordPath('clients', 'lamp-b'), 'DELETE') };
      },
    },
    targetScenario(),
    factoryResetScenario(ctx),
    {
      name: 'event log',
      weight: 2,
      async setup(storage) {
        const { board, boot } = await basicBoard(storage, 'pc-log', 5, '35'.repeat(32));
        let acknowledged = 0;
        return {
          board,
          boot,
          act: async (b) => {
            for (let i = 0; i < EVENT_LOG_CAPACITY + 16; i++) {
              b.device.log('info', 'cut-test', `entry ${i}`);
              acknowledged = i + 1;
            }
          },
          // Whatever was acknowledged is kept (but for what the ring drops), in order, nothing torn.
          check: async (b) => {
            const entries = b.device.hal.eventLog.recent(EVENT_LOG_CAPACITY * 2);
            const ours = entries.map((e) => (e.source === 'cut-test' ? Number(e.message.slice(6)) : -1)).filter((n) => n >= 0);
            const problems: string[] = [];
            if (entries.length > EVENT_LOG_CAPACITY) problems.push(`${entries.length} event log entries, more than ${EVENT_LOG_CAPACITY}`);
            if (entries.length < EVENT_LOG_CAPACITY && ours.length > 0 && ours[0] !== 0) problems.push(`the log is not full, yet its first entries are gone: ${ours.join(',')}`);
            if (ours.some((n, i) => i > 0 && n !== ours[i - 1]! + 1)) problems.push(`entries missing in the middle: ${ours.join(',')}`);
            const last = ours[ours.length - 1] ?? -1;
            if (acknowledged > 0 && last !== acknowledged - 1 && last !== acknowledged) problems.push(`the last entry is ${last}, ${acknowledged} were written`);
            return problems;
          },
        };
      },
    },
  ];
}

/** A line typed on the board's serial console; its OK/ERR answer. */
async function typeLine(tb: TestBoard, line: string): Promise<string> {
  const before = tb.consoleOut.length;
  await tb.device.console.dispatch(line);
  return tb.consoleOut.slice(before).find((l) => l.startsWith('OK ') || l.startsWith('ERR ')) ?? '(no answer)';
}

/**
 * The console's factory-reset (docs/storage.md, "Factory reset"): from a board holding records, a
 * backup, a cloud URL, an admin password set on the console and an unfinished provisioning's marker,
 * a cut anywhere leaves, after the next boot, all of it or none of it. The board has no factory
 * password, so a finished reset shows as "no password" until one is set on the console again.
 */
function factoryResetScenario(ctx: MemoryContext): Scenario {
  const id = identity('pc-reset', 8);
  const fuse = '38'.repeat(32);
  const boot = (s: MemoryStorage) => powerUp({ identity: id, fuseKeyHex: fuse, storage: s, factoryPassword: false });
  const setPassword = async (b: TestBoard) => {
    const answer = await typeLine(b, `password ${PASSWORD}`);
    if (!answer.startsWith('OK ')) throw new Error(`password: ${answer}`);
  };
  return {
    name: 'factory reset',
    weight: 2,
    wholeState: true,
    async setup(storage) {
      const board = boot(storage);
      await board.device.boot();
      await setPassword(board);
      const auth = await login(access(board));
      await seedRecords(board, auth);
      await put(board, auth, API_PATHS.backup, OLD_BACKUP);
      await put(board, auth, API_PATHS.cloud, { url: ctx.cloudUrl });
      // Last (a configuration write through the API removes it): an unfinished provisioning's marker.
      writeFileAtomically(storage, PROVISIONING_INCOMPLETE_PATH, new TextEncoder().encode(id.uuid));
      return {
        board,
        boot,
        act: async (b) => {
          const answer = await typeLine(b, 'factory-reset');
          if (!answer.startsWith('OK ') && !b.storage.power?.off) throw new Error(`factory-reset: ${answer}`);
        },
        afterBoot: async (b) => {
          if (!b.device.visual.hasPassword()) await setPassword(b);
        },
      };
    },
  };
}

/** Spec 3.6 on the target: wipe (step 5) and copy (step 6), from a source that is not cut. */
function targetScenario(): Scenario {
  let source: { air: MemoryAir; board: TestBoard } | undefined;
  const target = identity('pc-target', 6);
  const fuse = '36'.repeat(32);
  const sourceAir = async () => {
    if (!source) {
      const air = new MemoryAir();
      const board = powerUp({ identity: identity('pc-source', 7), fuseKeyHex: '37'.repeat(32), storage: new MemoryStorage(), air });
      await board.device.boot();
      const auth = await login(access(board));
      await put(board, auth, recordPath('controllers', target.uuid), { name: 'target', ethernet_mac: target.ethernetMac });
      await seedRecords(board, auth);
      await put(board, auth, recordPath('clients', 'lamp-c'), clientConfig('02:00:00:C0:00:0C'));
      await put(board, auth, API_PATHS.backup, NEW_BACKUP);
      const on = await call(board, 'PUT', API_PATHS.provisioning, { headers: auth });
      if (on.status !== 200) throw new Error(`provisioning mode: ${on.status} ${on.text}`);
      source = { air, board };
    }
    return source.air;
  };
  return {
    name: 'target procedure wipe and copy',
    weight: 4,
    configuredMeansNew: true,
    async setup(storage) {
      // First boot away from the source (nothing to provision from): password and log on flash.
      const first = powerUp({ identity: target, fuseKeyHex: fuse, storage });
      await first.device.boot();
      const air = await sourceAir();
      const boot = (s: MemoryStorage) => powerUp({ identity: target, fuseKeyHex: fuse, storage: s });
      // The cut operation is the next boot within range of the source: the whole procedure.
      const board = powerUp({ identity: target, fuseKeyHex: fuse, storage, air });
      return {
        board: first,
        boot,
        act: async () => {
          const r = await board.device.boot();
          if (!storage.power?.off && !(r.role === 'controller' && r.provisioning.kind === 'finished' && r.provisioning.ok)) throw new Error(`provisioning: ${JSON.stringify(r.provisioning)}`);
        },
        // And from what it holds it provisions again, completely, when the source is in range.
        check: async (b) => {
          const again = powerUp({ identity: target, fuseKeyHex: fuse, storage: b.storage, air });
          const r = await again.device.boot();
          if (r.role === 'controller' && (r.provisioning.kind === 'configured' || (r.provisioning.kind === 'finished' && r.provisioning.ok))) return [];
          return [`provisioning again: ${JSON.stringify(r.provisioning)}`];
        },
      };
    },
  };
}

export interface ScenarioPlan {
  scenario: Scenario;
  /** Storage operations of the uncut operation. */
  ops: number;
  old: FlashState;
  neu: FlashState;
  /** With wholeState: the durable state after the uncut operation (durableState). */
  neuWhole?: string;
}

/** The operation run once without a cut: how many storage operations it makes, and the new state. */
export async function plan(scenario: Scenario): Promise<ScenarioPlan> {
  const power = new PowerSwitch(1);
  const storage = new MemoryStorage(power);
  const { board, act, boot, afterBoot } = await scenario.setup(storage);
  const oldWhole = durableState(storage.files);
  const old = await snapshot(access(board), await login(access(board)));
  power.arm(null);
  await act(board);
  const ops = power.ops;
  const after = boot(storage);
  await after.device.boot();
  const neuWhole = durableState(storage.files);
  if (scenario.wholeState && neuWhole === oldWhole) throw new Error(`${scenario.name}: the operation changed nothing durable`);
  await afterBoot?.(after);
  const neu = await snapshot(access(after), await login(access(after)));
  return { scenario, ops, old, neu, ...(scenario.wholeState ? { neuWhole } : {}) };
}

/**
 * One trial: cut during operation number `at` (1-based) of the scenario's operation; with
 * `cutRecoveryAt`, cut the boot after it too, at that operation. Then boot clean and check.
 */
export async function trial(p: ScenarioPlan, seed: number, at: number, cutRecoveryAt: number | null): Promise<TrialResult> {
  const power = new PowerSwitch(seed);
  const storage = new MemoryStorage(power);
  const { board, act, boot, check, afterBoot } = await p.scenario.setup(storage);
  // This board's own old state (records are encrypted with fresh nonces: not the plan's bytes).
  const oldWhole = durableState(storage.files);
  power.arm(at);
  try {
    await act(board);
  } catch {
    /* the board died, or answered an error as it did */
  }
  await settle();
  if (!power.off) return { scenario: p.scenario.name, cuts: 0, problems: [`no cut at operation ${at} of ${p.ops}`] };
  const where = `${power.cut!.op} ${power.cut!.path} (operation ${at} of ${p.ops})`;
  let cuts = 1;
  storage.restorePower();
  if (cutRecoveryAt !== null) {
    power.arm(cutRecoveryAt);
    try {
      await boot(storage).device.boot();
    } catch {
      /* cut while booting */
    }
    await settle();
    if (power.off) cuts++;
    storage.restorePower();
  }
  power.arm(null);
  const again = boot(storage);
  let problems: string[];
  try {
    await again.device.boot();
    problems = p.neuWhole !== undefined ? wholeStateProblems(storage.files, oldWhole, p.neuWhole) : [];
    await afterBoot?.(again);
    problems.push(...await checkRecovered(access(again), p.old, p.neu, p.scenario.configuredMeansNew && again.device.status().configured === true ? { mustBe: p.neu } : {}));
    if (check) problems.push(...(await check(again)));
  } catch (err) {
    problems = [`boot after the cut failed: ${err instanceof Error ? err.stack : String(err)}`];
  }
  if (problems.length > 0) problems = [`cut during ${where}${cuts > 1 ? ` and during the next boot at operation ${cutRecoveryAt}` : ''}: ${problems.join('; ')}; flash: ${describeFiles(again.storage.files)}`];
  return { scenario: p.scenario.name, cuts, problems };
}

/** Lets the promise jobs a dead board left (its handlers' catch blocks) run out. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}
