// A CloudStore in front of another, where every call goes through an admission gate (cloud/admission.ts):
// a bounded number of store operations at work, a bounded queue, a bounded wait. PostgreSQL's pool
// would otherwise queue every request of a boot storm without limit; past the gate's bounds a request
// gets 503 `store_saturated` with Retry-After (docs/fleet-scale.md).
import { Admission, type AdmissionLimits } from '../admission.ts';
import type { CloudStore } from './types.ts';

/** Not gated: the lifecycle, and what is not an operation (the counts are read synchronously). */
const UNGATED = new Set<PropertyKey>(['kind', 'close', 'stats', 'then']);

export function guardStore(store: CloudStore, limits: AdmissionLimits): { store: CloudStore; gate: Admission } {
  const gate = new Admission('store', limits);
  const guarded = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || UNGATED.has(prop)) return value;
      const fn = value as (...args: unknown[]) => Promise<unknown>;
      return (...args: unknown[]) => gate.run(() => fn.apply(target, args));
    },
  });
  return { store: guarded, gate };
}
