// What each worker of a serve may hold (docs/cloud-workers.md): the service's bounds divided among
// its workers, so N workers hold what one process held.
import { describe, expect, it } from 'vitest';
import { workerLimits, workerShare } from '../../cloud/worker-share.ts';
import { HTTP_LIMITS } from '../../cloud/limits.ts';

describe('workerShare', () => {
  it('divides, rounding up, never below the floor; one worker keeps the whole; 0 stays off', () => {
    expect(workerShare(64, 1)).toBe(64);
    expect(workerShare(64, 2)).toBe(32);
    expect(workerShare(64, 3)).toBe(22);
    expect(workerShare(10, 64, 2)).toBe(2);
    expect(workerShare(0, 4)).toBe(0);
  });

  it('divides the gates (at work and queued, store and uploads), and leaves time-outs alone', () => {
    const two = workerLimits(HTTP_LIMITS, 2);
    expect(two).toEqual({
      ...HTTP_LIMITS,
      storeMaxActive: HTTP_LIMITS.storeMaxActive / 2,
      storeMaxQueued: HTTP_LIMITS.storeMaxQueued / 2,
      uploadMaxActive: HTTP_LIMITS.uploadMaxActive / 2,
      uploadMaxQueued: HTTP_LIMITS.uploadMaxQueued / 2,
    });
    expect(workerLimits(HTTP_LIMITS, 1)).toEqual(HTTP_LIMITS);
    // A queue of 0 (refuse at once past the slots) stays 0; slots never fall to 0.
    expect(workerLimits({ ...HTTP_LIMITS, uploadMaxActive: 1, uploadMaxQueued: 0 }, 8)).toMatchObject({ uploadMaxActive: 1, uploadMaxQueued: 0 });
  });
});
