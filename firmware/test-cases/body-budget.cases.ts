// The memory a board gives to the requests it has not answered (core/http/request-memory.ts): the
// bodies it reads whole (records, small JSON requests) come out of one budget for all of them at once
// (docs/board-http-limits.md). A body that would pass it is refused with 503 board_busy and
// Retry-After; the request that holds the budget is unharmed.
import type { BodyReader } from '../src/hal/network.ts';
import { utf8Encode } from '../src/core/bytes.ts';
import { REQUEST_MEMORY_BYTES } from '../src/core/http/request-memory.ts';
import { equal, ok, type TestCase } from './assert.ts';
import { bench, board, call, login, readAll } from './fixtures.ts';

/** A client that sends `first` bytes of its body in 1 KB pieces, then waits for `go` before the rest. */
function slowBody(bytes: Uint8Array, first: number, go: Promise<void>): BodyReader {
  let at = 0;
  return {
    async read() {
      if (at >= bytes.length) return null;
      if (at >= first) await go;
      const piece = bytes.subarray(at, Math.min(at + 1024, bytes.length));
      at += piece.length;
      return piece;
    },
  };
}

/** A controller record padded with JSON whitespace to `size` bytes. */
function paddedRecord(mac: string, size: number): Uint8Array {
  const json = JSON.stringify({ ethernet_mac: mac, name: 'padded' });
  return utf8Encode(json + ' '.repeat(size - json.length));
}

export const bodyBudgetCases: TestCase[] = [
  {
    name: `record bodies read at the same time share one budget (${REQUEST_MEMORY_BYTES} bytes): past it 503 board_busy with Retry-After and nothing stored, the request holding it unharmed`,
    async run() {
      const c = board(bench(), { role: 'controller' });
      await c.device.boot();
      const auth = await login(c);
      let go!: () => void;
      const gate = new Promise<void>((resolve) => (go = resolve));
      // The slow request holds half the budget while its client waits; the second needs more than the rest.
      const half = REQUEST_MEMORY_BYTES / 2;
      const slowBytes = paddedRecord('02:00:00:E0:00:01', half + 2048);
      const slow = c.device.handle({
        method: 'PUT',
        path: '/api/controllers/ctl-slow',
        query: {},
        headers: { ...auth, 'content-type': 'application/json', 'content-length': String(slowBytes.length) },
        iface: 'ethernet',
        body: slowBody(slowBytes, half, gate),
      });
      for (let i = 0; i < 50; i++) await Promise.resolve();
      const refused = await call(c, 'PUT', '/api/controllers/ctl-second', { headers: { ...auth, 'content-type': 'application/json' }, body: paddedRecord('02:00:00:E0:00:02', half + 1024) });
      equal(refused.status, 503, 'the second record body');
      equal((refused.json as { error?: string }).error, 'board_busy', 'its code');
      equal(refused.headers['retry-after'], '1', 'Retry-After');
      equal((await call(c, 'GET', '/api/controllers/ctl-second', { headers: auth })).status, 404, 'nothing stored for it');
      // A small request still fits beside the slow one.
      equal((await call(c, 'POST', '/api/login', { body: { password: 'wrong-password' } })).status, 401, 'a login is read meanwhile');
      go();
      const done = await slow;
      await readAll(done.body);
      equal(done.status, 201, 'the slow request');
      equal((await call(c, 'GET', '/api/controllers/ctl-slow', { headers: auth })).status, 200, 'stored');
      // The budget was given back: the refused request, sent again, goes through.
      const again = await call(c, 'PUT', '/api/controllers/ctl-second', { headers: { ...auth, 'content-type': 'application/json' }, body: paddedRecord('02:00:00:E0:00:02', half + 1024) });
      equal(again.status, 201, 'sent again');
      ok(c.device.api.memory.inUse() === 0, 'nothing held once every request is answered');
    },
  },
];
