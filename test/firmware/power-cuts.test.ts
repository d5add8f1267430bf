// Power cuts lose nothing (docs/storage.md, "Power cuts"): the engine of `npm run test:power-cuts`
// cuts boards' power at seeded points of every operation that writes their flash, 1,000 times on the
// in-memory platform and a few tens of times on virtual boards (the SDK's host build of the firmware,
// its flash folder real files, a cut a SIGKILL of its process: tools/power-cuts/sdk.ts), boots them
// again and checks old-or-new everywhere. Also: the memory flash model, what a cut on a virtual board
// does, and that the checks do catch what a loss looks like.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Device } from '../../firmware/src/core/device.ts';
import { MemoryAir } from '../../firmware/src/platform/memory/air.ts';
import { createMemoryBoard } from '../../firmware/src/platform/memory/board.ts';
import { ManualClock } from '../../firmware/src/platform/memory/clock.ts';
import { PowerCutError, PowerSwitch } from '../../firmware/src/platform/memory/power-cut.ts';
import { MemoryStorage } from '../../firmware/src/platform/memory/storage.ts';
import { checkRecovered, controllerIdentity, durableState, login, NEW_BACKUP, OLD_BACKUP, PASSWORD, snapshot, wholeStateProblems } from '../../tools/power-cuts/common.ts';
import { runPowerCuts } from '../../tools/power-cuts/engine.ts';
import { access } from '../../tools/power-cuts/memory.ts';
import { FlashCutter, flashFiles, powerUp, boardAccess } from '../../tools/power-cuts/sdk.ts';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('power cuts', () => {
  it('1,000 cuts on the memory platform and 48 on virtual boards: nothing lost', async () => {
    const report = await runPowerCuts({ cuts: 1000, boardCuts: 48, seed: 20261121 });
    expect(report.losses).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.byPlatform.memory.injected).toBeGreaterThanOrEqual(1000);
    expect(report.byPlatform.board.injected).toBeGreaterThanOrEqual(48);
    expect(report.recovered).toBe(report.injected);
    for (const name of ['local backup PUT', 'cloud backup retrieve', 'record PUT (new controller)', 'record DELETE', 'target procedure wipe and copy', 'event log', 'factory reset', 'local backup PUT (XS)', 'cloud backup retrieve (XS)', 'target procedure wipe and copy (XS)', 'boot: repair and event log (XS)', 'factory reset (XS)']) {
      expect(report.byScenario[name]?.injected, name).toBeGreaterThan(0);
    }
  }, 120_000);

  it('the memory flash: a cut during a write leaves a prefix, then every operation throws until power is back', () => {
    const power = new PowerSwitch(7);
    const s = new MemoryStorage(power);
    const f = s.create('/a.tmp');
    f.write(bytes('0123456789'));
    power.arm(1);
    expect(() => f.write(bytes('abcdefghij'))).toThrow(PowerCutError);
    const left = new TextDecoder().decode(s.files.get('/a.tmp'));
    expect('0123456789abcdefghij'.startsWith(left)).toBe(true);
    expect(power.cut).toMatchObject({ op: 'write', path: '/a.tmp' });
    expect(() => s.size('/a.tmp')).toThrow(PowerCutError);
    expect(() => s.list('/')).toThrow(PowerCutError);
    expect(() => f.close()).toThrow(PowerCutError);
    s.restorePower();
    expect(s.size('/a.tmp')).toBe(left.length);
    expect(() => f.close()).toThrow(/not open/);
  });

  it('the memory flash: a cut rename leaves the old or the new file at its destination', () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 40; seed++) {
      const power = new PowerSwitch(seed);
      const s = new MemoryStorage(power);
      s.files.set('/x', bytes('old'));
      s.files.set('/x.tmp', bytes('new'));
      power.arm(1);
      expect(() => s.rename('/x.tmp', '/x')).toThrow(PowerCutError);
      const at = new TextDecoder().decode(s.files.get('/x'));
      expect(['old', 'new']).toContain(at);
      seen.add(`${at}${s.files.has('/x.tmp') ? '+tmp' : ''}`);
    }
    // Every outcome the model allows happens: not renamed, renamed, copied with the source left.
    expect([...seen].sort()).toEqual(['new', 'new+tmp', 'old+tmp']);
  });

  it('a virtual board: the power goes before the armed operation (a cut write leaves a prefix of its bytes), and the next boot repairs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flash-cut-'));
    const flashDir = join(dir, 'flash');
    const me = { identity: controllerIdentity('pc-cut', 9, 'board'), fuseKeyHex: '49'.repeat(32), flashDir, cutter: new FlashCutter(3) };
    let board = await powerUp(me);
    try {
      const a = () => boardAccess(board, flashDir);
      const auth = await login(a());
      expect((await a().http('PUT', '/backup', { headers: auth, body: OLD_BACKUP })).status).toBe(200);
      // The uncut PUT: which of its operations writes the backup's temporary file first.
      me.cutter.arm(null);
      expect((await a().http('PUT', '/backup', { headers: auth, body: NEW_BACKUP })).status).toBe(200);
      const firstWrite = me.cutter.seen.findIndex((op) => op.startsWith('write /backup.json.tmp '));
      expect(firstWrite, me.cutter.seen.join(', ')).toBeGreaterThan(0);
      expect((await a().http('PUT', '/backup', { headers: auth, body: OLD_BACKUP })).status).toBe(200);

      const pid = board.firmwarePid!;
      me.cutter.arm(firstWrite + 1);
      await expect(a().http('PUT', '/backup', { headers: auth, body: NEW_BACKUP })).rejects.toThrow();
      const cut = me.cutter.cut!;
      expect(cut).toMatchObject({ op: 'write', path: '/backup.json.tmp', at: firstWrite + 1 });
      expect(cut.kept!).toBeLessThan(cut.length!);
      // The process is gone (killed: it did not end on its own, with a restart or an abort), and what
      // reached the flash stays: the first `kept` bytes of the new backup in the temporary file, the
      // old backup in place.
      const alive = () => {
        try {
          return !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
        } catch {
          return false; // reaped
        }
      };
      for (const until = Date.now() + 5000; alive() && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
      expect(alive()).toBe(false);
      expect(board.firmwarePid).toBeUndefined();
      expect(board.reboots).toEqual([]);
      expect(Buffer.from(readFileSync(join(flashDir, 'backup.json.tmp'))).equals(Buffer.from(NEW_BACKUP).subarray(0, cut.kept))).toBe(true);
      expect(readFileSync(join(flashDir, 'backup.json'), 'utf8')).toBe(OLD_BACKUP);

      await board.close();
      me.cutter.arm(null);
      board = await powerUp(me);
      expect(flashFiles(flashDir).has('/backup.json.tmp')).toBe(false);
      const state = await snapshot(a(), await login(a()));
      expect(state.backup).toBe(OLD_BACKUP);
      expect(await checkRecovered(a(), state, state)).toEqual([]);
    } finally {
      await board.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('the checks catch a loss: a sidecar that disagrees, a temporary file, a record neither old nor new', async () => {
    const storage = new MemoryStorage();
    const mb = createMemoryBoard({ identity: { uuid: 'pc-check', role: 'controller', ethernetMac: '24:0A:C4:E3:00:01', wifiMac: '24:0A:C4:13:00:01', hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' }, fuseKeyHex: '44'.repeat(32), air: new MemoryAir(), clock: new ManualClock(Date.now()), storage });
    const tb = { ...mb, identity: mb.hal.system.identity(), device: new Device(mb.hal, { initialAdminPassword: PASSWORD }) };
    await tb.device.boot();
    const a = access(tb);
    const auth = await login(a);
    await a.http('PUT', '/backup', { headers: auth, body: '{"a":1}' });
    await a.http('PUT', '/api/controllers/ctl-a', { headers: auth, body: { ethernet_mac: '02:00:00:E0:00:0A' } });
    const state = await snapshot(a, auth);
    expect(await checkRecovered(a, state, state)).toEqual([]);

    storage.files.set('/backup.etag', bytes('0'.repeat(64)));
    storage.files.set('/records/clients/lamp-9.tmp', bytes('half'));
    tb.device.records.put('controllers', 'ctl-a', JSON.stringify({ ethernet_mac: '02:00:00:E0:00:0B' }));
    const problems = (await checkRecovered(a, state, state)).join('\n');
    expect(problems).toMatch(/sidecar .* disagrees/);
    expect(problems).toMatch(/temporary file left: \/records\/clients\/lamp-9\.tmp/);
    expect(problems).toMatch(/controllers\/ctl-a is neither old/);
  });

  it('the whole-state check catches a half-done factory reset: records gone, password and backup kept', () => {
    const files = (m: Record<string, string>) => new Map(Object.entries(m).map(([p, v]) => [p, bytes(v)]));
    const old = durableState(files({ '/backup.json': '{}', '/config/admin-password': 'pw', '/records/clients/lamp-a': 'r', '/log/0000000001': '{}' }));
    const neu = durableState(files({ '/log/0000000002': '{}' }));
    expect(wholeStateProblems(files({ '/backup.json': '{}', '/config/admin-password': 'pw', '/records/clients/lamp-a': 'r' }), old, neu)).toEqual([]);
    expect(wholeStateProblems(files({ '/log/0000000009': '{"x":1}' }), old, neu)).toEqual([]);
    const half = wholeStateProblems(files({ '/backup.json': '{}', '/config/admin-password': 'pw' }), old, neu);
    expect(half.join('')).toMatch(/half done: neither the old state \(differs at \/records\/clients\/lamp-a\)/);
  });
});
