// The bench's MQTT brokers: aedes embedded, and Debian's mosquitto (installed by .ci/run) on
// loopback only; a board's session goes through the host-side bridge.
import { describe, expect, it } from 'vitest';
import { startBroker } from '../../harness/broker.ts';

describe.each(['aedes', 'mosquitto'] as const)('%s', (kind) => {
  it('accepts a session from the bridge on 127.0.0.1 and sees its publish', async () => {
    const broker = await startBroker(kind);
    try {
      expect(broker.host).toBe('127.0.0.1');
      const id = await broker.bridge.connect({ host: '127.0.0.1', port: broker.port, clientId: 'lamp-7' });
      await broker.bridge.publish(id, 'devices/lamp-7/status', new TextEncoder().encode('{"state":"online"}'));
      await new Promise((r) => setTimeout(r, 100));
      expect(broker.connections).toContain('lamp-7');
      expect(broker.publishes).toContainEqual({ clientId: 'lamp-7', topic: 'devices/lamp-7/status', payload: '{"state":"online"}' });
      await expect(broker.bridge.connect({ host: '10.0.0.1', port: broker.port, clientId: 'x' })).rejects.toThrow(/not on this machine/);
      await broker.bridge.close(id);
    } finally {
      await broker.close();
    }
  });
});
