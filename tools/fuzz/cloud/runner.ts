// A seeded, bounded fuzzer for the cloud API. From one seed it generates a fixed sequence of requests
// (./cases.ts): mutated valid requests of every route of the cloud's route table, malformed paths,
// headers and bodies, and raw malformed HTTP. Everything goes over raw loopback sockets, so that
// nothing is normalized on the way. It checks: no 5xx; every other error with a body is the JSON
// error shape; a canary device's backup and a canary firmware release stored before the run are
// byte-identical after it (./canary.ts); /health still answers.
//
//   npm run fuzz -- --only cloud --requests 3000 --seed 42 [--concurrency 8] [--url http://127.0.0.1:8080 --token <jwt>]
//
// Without --url it starts a cloud in-process on SQLite in a temporary folder (./server.ts).
import { errorShapeProblem, httpRequest, rawExchange, type RawResponse, type RawTarget } from '../raw-http.ts';
import { Rng, seedFrom } from '../rng.ts';
import { canarySnapshot, setUp } from './canary.ts';
import { generateCase, type FuzzCase } from './cases.ts';
import { newContext } from './context.ts';

export interface FuzzFailure {
  index: number;
  kind: string;
  label: string;
  problem: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  durationMs: number;
  /** Answers by class: 1xx…5xx, and `none` for exchanges that got no answer. */
  byStatusClass: Record<string, number>;
  byStatus: Record<string, number>;
  byKind: Record<string, number>;
  failures: FuzzFailure[];
  canaryIntact: boolean;
  healthOk: boolean;
}

export interface CloudFuzzOptions {
  /** The cloud, e.g. http://127.0.0.1:8080; or host and port. */
  baseUrl?: string;
  host?: string;
  port?: number;
  /** A super-user JWT for the cloud (admin and appconfig requests, and the canary set-up). */
  adminToken: string;
  /** A valid JWT that is not a super user (optional; a garbage one is used otherwise). */
  nonSuperToken?: string;
  requests: number;
  seed: number | string;
  /** Exchanges in flight at once (default 8); 1 replays in exactly the generated order. */
  concurrency?: number;
  onProgress?: (done: number, total: number, report: FuzzReport) => void;
}

function classOf(status: number | undefined): string {
  return status === undefined ? 'none' : `${Math.floor(status / 100)}xx`;
}

/** Runs the fuzz and returns the report; it never throws for a finding (see report.failures). */
export async function runCloudFuzz(opts: CloudFuzzOptions): Promise<FuzzReport> {
  const url = opts.baseUrl ? new URL(opts.baseUrl) : undefined;
  const target: RawTarget = { host: opts.host ?? url?.hostname.replace(/^\[|\]$/g, '') ?? '127.0.0.1', port: opts.port ?? Number(url?.port || 80) };
  const seed = seedFrom(opts.seed);
  const rng = new Rng(seed);
  const started = Date.now();
  const report: FuzzReport = { seed, requests: 0, durationMs: 0, byStatusClass: {}, byStatus: {}, byKind: {}, failures: [], canaryIntact: false, healthOk: false };
  const { devices, canary } = await setUp(target, opts.adminToken, rng.fork());
  const ctx = newContext({ rng, adminToken: opts.adminToken, ...(opts.nonSuperToken ? { nonSuperToken: opts.nonSuperToken } : {}), devices, canary: canary.device });
  const fail = (c: Pick<FuzzCase, 'index' | 'kind' | 'label'>, problem: string) => {
    if (report.failures.length < 100) report.failures.push({ index: c.index, kind: c.kind, label: c.label, problem });
  };

  let next = 0;
  const worker = async () => {
    while (next < opts.requests) {
      const c = generateCase(ctx, next++);
      const result = await rawExchange(target, c.steps, { methods: c.methods, expectResponses: c.expectResponses, timeoutMs: 8000 });
      report.requests++;
      report.byKind[c.kind] = (report.byKind[c.kind] ?? 0) + 1;
      if (result.responses.length === 0) {
        report.byStatusClass.none = (report.byStatusClass.none ?? 0) + 1;
        if (!c.mayNotAnswer) fail(c, result.timedOut ? 'no answer within 8 s' : `connection closed without an answer${result.trailing.length ? `: ${result.trailing.toString('latin1').slice(0, 80)}` : ''}`);
      }
      if (result.responses.length > c.methods.length) fail(c, `${result.responses.length} answers to ${c.methods.length} request(s): ${result.responses.map((r) => r.status).join(', ')}`);
      result.responses.forEach((res, i) => {
        report.byStatusClass[classOf(res.status)] = (report.byStatusClass[classOf(res.status)] ?? 0) + 1;
        report.byStatus[res.status] = (report.byStatus[res.status] ?? 0) + 1;
        const problem = errorShapeProblem(res, c.methods[i] ?? c.methods[0] ?? 'GET');
        if (problem) fail(c, problem);
      });
      if (report.requests % 250 === 0) opts.onProgress?.(report.requests, opts.requests, report);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 8) }, worker));

  // After the storm: the canary is untouched and the cloud still answers.
  try {
    const after = await canarySnapshot(target, opts.adminToken, canary.device);
    report.canaryIntact = after.backup.equals(canary.backup) && after.text === canary.snapshot;
    if (!report.canaryIntact) fail({ index: -1, kind: 'canary', label: 'canary' }, `canary changed: before ${canary.snapshot.slice(0, 400)} after ${after.text.slice(0, 400)}`);
  } catch (err) {
    fail({ index: -1, kind: 'canary', label: 'canary' }, `canary unreadable: ${err instanceof Error ? err.message : String(err)}`);
  }
  const health = await rawExchange(target, httpRequest('GET', '/health', [['Connection', 'close']]), { expectResponses: 1 });
  report.healthOk = health.responses[0]?.status === 200;
  if (!report.healthOk) fail({ index: -1, kind: 'health', label: 'GET /health' }, `health answered ${health.responses[0]?.status ?? 'nothing'}`);
  report.durationMs = Date.now() - started;
  opts.onProgress?.(report.requests, opts.requests, report);
  return report;
}

/** One paragraph for a failure message: the seed first, so that the run can be replayed. */
export function formatFuzzReport(report: FuzzReport): string {
  const lines = [
    `cloud fuzz seed=${report.seed} requests=${report.requests} duration=${(report.durationMs / 1000).toFixed(1)}s`,
    `  by status class: ${JSON.stringify(report.byStatusClass)}`,
    `  by status: ${JSON.stringify(report.byStatus)}`,
    `  canary intact: ${report.canaryIntact}, health: ${report.healthOk}`,
  ];
  if (report.failures.length) {
    lines.push(`  ${report.failures.length} failure(s) (replay: npm run fuzz -- --seed ${report.seed} --requests ${report.requests} --concurrency 1):`);
    for (const f of report.failures.slice(0, 20)) lines.push(`    #${f.index} ${f.kind}: ${f.problem} <- ${f.label}`);
  }
  return lines.join('\n');
}
