// The cloud fuzz's sequence: from one seed, case after case, a request to one of the targets
// (./targets.ts) mutated and framed (by length, chunked, or split in two writes), or raw malformed
// HTTP (./malformed.ts). The generator never looks at answers, so a seed replays the same requests
// (signatures differ: ECDSA is randomized, timestamps are the clock's).
import { chunked, httpRequest, type RawStep } from '../raw-http.ts';
import type { GenContext } from './context.ts';
import { mutateRequest } from './generators.ts';
import { malformed } from './malformed.ts';
import { TARGETS, type Target } from './targets.ts';

export interface FuzzCase {
  index: number;
  /** The target's name (a route's operationId, `canary`, `misc`), or `raw`. */
  kind: string;
  /** What was sent, short; enough with the seed and index to find it again. */
  label: string;
  steps: RawStep[];
  methods: string[];
  expectResponses: number;
  /** The client itself breaks the exchange (reset, incomplete request): no answer is fine. */
  mayNotAnswer: boolean;
  /** The request as sent, after the mutations (not for raw cases). */
  request?: { method: string; path: string };
}

/** A fifth of the cases are raw malformed HTTP, however many routes the table has. */
const RAW_SHARE = 0.2;
const RAW_WEIGHT = (TARGETS.reduce((sum, t) => sum + t.weight, 0) * RAW_SHARE) / (1 - RAW_SHARE);

export function generateCase(ctx: GenContext, index: number): FuzzCase {
  const { rng } = ctx;
  const target = rng.weighted<Target | 'raw'>([[RAW_WEIGHT, 'raw'], ...TARGETS.map((t) => [t.weight, t] as const)]);
  if (target === 'raw') {
    const m = malformed(ctx);
    const requests = m.requests ?? 1;
    return { index, kind: 'raw', label: m.label, steps: m.bytes, methods: Array(requests).fill(m.method), expectResponses: requests, mayNotAnswer: m.mayNotAnswer };
  }
  const built = target.build(ctx);
  const { req, label } = mutateRequest(ctx, { method: built.method, path: built.path, headers: [...built.headers, ['Connection', 'close']], ...(built.body ? { body: built.body } : {}) }, built.fixedMethod);
  const framing = rng.weighted([
    [12, 'length'],
    [1, 'chunked'],
    [1, 'split'],
  ] as const);
  let steps: RawStep[];
  if (framing === 'chunked' && req.body) {
    const cut = rng.int(0, req.body.length);
    steps = [{ write: httpRequest(req.method, req.path, [...req.headers, ['Transfer-Encoding', 'chunked']], chunked([req.body.subarray(0, cut), req.body.subarray(cut)].filter((b) => b.length > 0)), { lengthHeader: false }) }];
  } else {
    const bytes = httpRequest(req.method, req.path, req.headers, req.body);
    if (framing === 'split') {
      const cut = rng.int(1, Math.max(1, bytes.length - 1));
      steps = [{ write: bytes.subarray(0, cut), delayMs: rng.int(1, 30) }, { write: bytes.subarray(cut) }];
    } else {
      steps = [{ write: bytes }];
    }
  }
  return {
    index,
    kind: target.name,
    label: `${built.label}${label ? ` [${label}]` : ''} ${req.method} ${req.path.slice(0, 120)}`,
    steps,
    methods: [req.method],
    expectResponses: 1,
    mayNotAnswer: false,
    request: { method: req.method, path: req.path },
  };
}
