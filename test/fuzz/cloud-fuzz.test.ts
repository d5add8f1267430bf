// The seeded fuzz of the cloud API (tools/fuzz/cloud/), a bounded run on every `npm test`: thousands
// of mutated and malformed requests over raw sockets, on SQLite and (shorter) on PostgreSQL. No 5xx,
// every error a JSON {"error","message"}, the canary backup and release unchanged, /health still
// answering, and no ERROR in the cloud's logs. A failure names the seed:
// CLOUD_FUZZ_SEED=<seed> npx vitest run test/fuzz/cloud-fuzz.test.ts replays it.
// And the fuzz's reach: its requests hit every route of the cloud's route table.
import { afterEach, describe, expect, it } from 'vitest';
import { ROUTES, routePattern } from '../../cloud/schema/routes.ts';
import { generateCase } from '../../tools/fuzz/cloud/cases.ts';
import { newContext, newDevice } from '../../tools/fuzz/cloud/context.ts';
import { formatFuzzReport, runCloudFuzz } from '../../tools/fuzz/cloud/runner.ts';
import { startFuzzCloud, type FuzzCloud } from '../../tools/fuzz/cloud/server.ts';
import { unknownRouteNames } from '../../tools/fuzz/cloud/targets.ts';
import { Rng } from '../../tools/fuzz/rng.ts';
import { freshDatabase } from '../helpers/postgres.ts';

const SEED = Number(process.env.CLOUD_FUZZ_SEED ?? process.env.FUZZ_SEED ?? 20261121);
let cloud: FuzzCloud | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

async function fuzz(requests: number, mustSee: string[], env?: Record<string, string>) {
  cloud = await startFuzzCloud(env ? { env } : {});
  const report = await runCloudFuzz({ baseUrl: cloud.url, adminToken: cloud.adminToken, nonSuperToken: cloud.nonSuperToken, requests, seed: SEED });
  const summary = formatFuzzReport(report);
  expect(report.failures, summary).toEqual([]);
  expect(report.requests, summary).toBe(requests);
  expect(report.byStatusClass['5xx'] ?? 0, summary).toBe(0);
  expect(report.canaryIntact, summary).toBe(true);
  expect(report.healthOk, summary).toBe(true);
  expect(cloud.errorLogs, summary).toEqual([]);
  // The fuzz got past the refusals into the routes: successes and each kind of refusal occur.
  for (const status of mustSee) {
    expect(report.byStatus[status] ?? 0, `status ${status} never seen\n${summary}`).toBeGreaterThan(0);
  }
  return report;
}

describe('cloud fuzz', () => {
  it(`5,000 seeded requests on SQLite (seed ${SEED})`, { timeout: 90_000 }, async () => {
    await fuzz(5000, ['200', '201', '204', '400', '401', '403', '404', '405', '413', '415', '431']);
  });

  it(`1,500 seeded requests on PostgreSQL (seed ${SEED})`, { timeout: 90_000 }, async () => {
    await fuzz(1500, ['200', '400', '401', '404'], { DATABASE_URL: await freshDatabase() });
  });
});

describe('cloud fuzz targets', () => {
  it('name only routes of the route table', () => {
    expect(unknownRouteNames()).toEqual([]);
  });

  it(`send requests to every route of the route table (the first 5,000 cases of seed ${SEED})`, () => {
    const ctx = newContext({ rng: new Rng(SEED), adminToken: 'a.b.c', devices: [newDevice('fuzz-dev-1'), newDevice('fuzz-dev-2')], canary: newDevice('canary-1') });
    const routes = ROUTES.map((route) => ({ route, pattern: routePattern(route.path), hits: 0 }));
    for (let i = 0; i < 5000; i++) {
      const request = generateCase(ctx, i).request;
      if (!request) continue;
      const path = request.path.split('?', 1)[0]!;
      const hit = routes.find((r) => r.route.method === request.method.toLowerCase() && r.pattern.test(path));
      if (hit) hit.hits++;
    }
    const missed = routes.filter((r) => r.hits === 0).map((r) => `${r.route.method.toUpperCase()} ${r.route.path}`);
    expect(missed, 'routes the fuzz never sends a request to').toEqual([]);
  });
});
