// The bench's MQTT brokers: aedes embedded, and Debian's mosquitto (installed by .ci/run) on
// loopback only; a client's session (a board's firmware connects itself) is seen by the broker: its
// client id and what it published, payload included.
import { connectAsync } from 'mqtt';
import { describe, expect, it } from 'vitest';
import { startBroker } from '../../harness/broker.ts';

describe.each(['aedes', 'mosquitto'] as const)('%s', (kind) => {
  it('takes a session on 127.0.0.1 and sees who connected and what each published', async () => {
    const broker = await startBroker(kind);
    try {
      expect(broker.host).toBe('127.0.0.1');
      const lamp = await connectAsync({ host: broker.host, port: broker.port, clientId: 'lamp-7', reconnectPeriod: 0 });
      const other = await connectAsync({ host: broker.host, port: broker.port, clientId: 'lamp-8', reconnectPeriod: 0 });
      await lamp.publishAsync('devices/lamp-7/status', '{"state":"online"}');
      await other.publishAsync('devices/lamp-8/status', '{"state":"idle"}');
      await lamp.publishAsync('devices/lamp-7/status', '{"state":"off"}');
      const until = Date.now() + 5000;
      while (broker.publishes.length < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(broker.connections).toEqual(['lamp-7', 'lamp-8']);
      // Two sessions' publishes may interleave either way; one session's keep their order.
      expect(broker.publishes.filter((p) => p.clientId === 'lamp-7')).toEqual([
        { clientId: 'lamp-7', topic: 'devices/lamp-7/status', payload: '{"state":"online"}' },
        { clientId: 'lamp-7', topic: 'devices/lamp-7/status', payload: '{"state":"off"}' },
      ]);
      expect(broker.publishes.filter((p) => p.clientId === 'lamp-8')).toEqual([{ clientId: 'lamp-8', topic: 'devices/lamp-8/status', payload: '{"state":"idle"}' }]);
      await Promise.all([lamp.endAsync(), other.endAsync()]);
    } finally {
      await broker.close();
    }
  });

  it('a client\'s will, published by the broker when its session ends without a goodbye, is that client\'s publish; the next session\'s pair up as before', async () => {
    const broker = await startBroker(kind);
    try {
      const will = { topic: 'devices/lamp-9/status', payload: '{"state":"offline"}', retain: true };
      const waitFor = async (n: number) => {
        const until = Date.now() + 5000;
        while (broker.publishes.length < n && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      };
      const polite = await connectAsync({ host: broker.host, port: broker.port, clientId: 'lamp-9', reconnectPeriod: 0, will });
      await polite.endAsync(); // a DISCONNECT: no will
      const lamp = await connectAsync({ host: broker.host, port: broker.port, clientId: 'lamp-9', reconnectPeriod: 0, will });
      await lamp.publishAsync('devices/lamp-9/status', '{"state":"online"}', { retain: true });
      await waitFor(1);
      lamp.stream.destroy(); // a power cut: no DISCONNECT
      await waitFor(2);
      const again = await connectAsync({ host: broker.host, port: broker.port, clientId: 'lamp-9', reconnectPeriod: 0, will });
      await again.publishAsync('devices/lamp-9/status', '{"state":"online","boot":2}', { retain: true });
      await waitFor(3);
      expect(broker.publishes).toEqual([
        { clientId: 'lamp-9', topic: 'devices/lamp-9/status', payload: '{"state":"online"}' },
        { clientId: 'lamp-9', topic: 'devices/lamp-9/status', payload: '{"state":"offline"}' },
        { clientId: 'lamp-9', topic: 'devices/lamp-9/status', payload: '{"state":"online","boot":2}' },
      ]);
      await again.endAsync();
    } finally {
      await broker.close();
    }
  });
});
