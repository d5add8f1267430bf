// A publish the broker receives after the event that reports it (the console and the MQTT connection
// race) is still seen; one that never comes is not, once the wait is over.
import { describe, expect, it } from 'vitest';
import type { ScenarioContext } from '../../harness/bench.ts';
import { publishSeen } from '../../harness/scenarios/helpers.ts';

describe('publishSeen', () => {
  it('waits for a publish that arrives late, and gives up on one that never does', async () => {
    const publishes: ScenarioContext['broker']['publishes'] = [];
    const ctx = { broker: { publishes } } as unknown as ScenarioContext;
    setTimeout(() => publishes.push({ clientId: 'c', topic: 'devices/c/status', payload: '{}' }), 100);
    expect(await publishSeen(ctx, (p) => p.topic === 'devices/c/status', 2_000)).toBe(true);
    const t0 = Date.now();
    expect(await publishSeen(ctx, (p) => p.topic === 'devices/other/status', 200)).toBe(false);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200);
  });
});
