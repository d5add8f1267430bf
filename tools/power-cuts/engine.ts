// The power-cut engine behind `npm run test:power-cuts` (tools/power-cuts.ts) and
// test/firmware/power-cuts.test.ts: cuts the power of boards at seeded points of every operation
// that writes their flash, boots them again and checks that nothing was lost (docs/storage.md,
// "Power cuts"). Most cuts run on the in-memory platform; some on virtual boards in XS with their
// flash folder, so that both flash layers are proven.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { loadConfig } from '../../cloud/config.ts';
import { startCloudServer } from '../../cloud/server.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';
import { PowerSwitch } from '../../firmware/src/platform/memory/power-cut.ts';
import { memoryScenarios, plan, trial, type Tally, type TrialResult } from './memory.ts';
import { boardTrials } from './sdk.ts';

export type { Tally, TrialResult };

export interface PowerCutOptions {
  /** Cuts on the in-memory platform. */
  cuts: number;
  /** Cuts on virtual boards in XS. */
  boardCuts: number;
  seed: number;
  /** Every trial, as it ends. */
  onTrial?: (r: TrialResult, platform: 'memory' | 'board') => void;
}

export interface PowerCutReport extends Tally {
  durationMs: number;
  byScenario: Record<string, Tally>;
  byPlatform: Record<'memory' | 'board', Tally>;
  /** One line per trial that lost something: where the power went and what was wrong after. */
  losses: string[];
}

const JWT_SECRET = 'power-cuts-secret-0123456789';

export async function runPowerCuts(o: PowerCutOptions): Promise<PowerCutReport> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'power-cuts-'));
  const store = new SqliteStore(':memory:');
  const cloud = await startCloudServer(loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: ':memory:', JWT_SECRET }), { store, sink: () => undefined });
  const token = await mintToken(new TextEncoder().encode(JWT_SECRET), { subject: 'power-cuts', groups: ['superuser'] });
  const enroll = async (uuid: string, publicKeyPem: string) => {
    const res = await fetch(`${cloud.url}/admin/devices/${uuid}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ public_key: publicKeyPem }) });
    if (res.status !== 200 && res.status !== 201) throw new Error(`enroll ${uuid}: ${res.status} ${await res.text()}`);
  };
  const report: PowerCutReport = { injected: 0, recovered: 0, lost: 0, durationMs: 0, byScenario: {}, byPlatform: { memory: zero(), board: zero() }, losses: [] };
  const count = (r: TrialResult, platform: 'memory' | 'board') => {
    const lost = r.problems.length > 0 ? Math.max(1, r.cuts) : 0;
    for (const t of [report, (report.byScenario[r.scenario] ??= zero()), report.byPlatform[platform]]) {
      t.injected += r.cuts;
      t.lost += lost;
      t.recovered += r.cuts - Math.min(lost, r.cuts);
    }
    report.losses.push(...r.problems);
    o.onTrial?.(r, platform);
  };
  try {
    const scenarios = memoryScenarios({ cloudUrl: cloud.url, enroll });
    const total = scenarios.reduce((n, s) => n + s.weight, 0);
    const rng = new PowerSwitch(o.seed);
    let done = 0;
    for (const [i, s] of scenarios.entries()) {
      const share = i === scenarios.length - 1 ? o.cuts - done : Math.round((o.cuts * s.weight) / total);
      done += share;
      if (share <= 0) continue;
      const p = await plan(s);
      if (p.ops === 0) throw new Error(`${s.name}: the operation wrote nothing to the flash`);
      for (let t = 0; t < share; t++) {
        // Every operation point in turn (from a seeded start), each with seeded effects; every
        // fourth trial cuts the boot after the cut too, early in it (its repair).
        const at = 1 + ((rng.pick(p.ops) + t) % p.ops);
        count(await trial(p, o.seed * 7919 + i * 104729 + t, at, t % 4 === 3 ? 1 + rng.pick(8) : null), 'memory');
      }
    }
    if (o.boardCuts > 0) {
      await boardTrials({ cloudUrl: cloud.url, enroll, dir }, o.boardCuts, o.seed, (r) => count(r, 'board'));
    }
  } finally {
    await cloud.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  report.durationMs = Date.now() - started;
  return report;
}

function zero(): Tally {
  return { injected: 0, recovered: 0, lost: 0 };
}

export function summaryLine(r: PowerCutReport): string {
  return `power cuts: injected=${r.injected} recovered=${r.recovered} lost=${r.lost}`;
}
