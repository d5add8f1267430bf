// A serve's worker starts with room in its old generation (cloud/cluster/heap.ts, docs/fleet-scale.md),
// unless the operator sized the heap in the node flags.
import { describe, expect, it } from 'vitest';
import { INITIAL_OLD_SPACE_MB, withWorkerHeap } from '../../cloud/cluster/heap.ts';

describe('withWorkerHeap', () => {
  it('adds the initial old generation to the flags a worker inherits', () => {
    expect(withWorkerHeap(['--enable-source-maps'])).toEqual(['--enable-source-maps', `--initial-old-space-size=${INITIAL_OLD_SPACE_MB}`]);
    expect(withWorkerHeap([])).toEqual([`--initial-old-space-size=${INITIAL_OLD_SPACE_MB}`]);
  });

  it("keeps the operator's own heap size, either flag", () => {
    expect(withWorkerHeap(['--initial-old-space-size=512'])).toEqual(['--initial-old-space-size=512']);
    expect(withWorkerHeap(['--initial-heap-size', '300'])).toEqual(['--initial-heap-size', '300']);
  });

  it('leaves the flags it was given unchanged', () => {
    const given = ['--perf-basic-prof-only-functions'];
    withWorkerHeap(given);
    expect(given).toEqual(['--perf-basic-prof-only-functions']);
  });
});
