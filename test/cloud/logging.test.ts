// Structured log records: the keys the logger writes (time, level, function, msg) are its own. A field
// of the same name used to replace them, so that an INFO line carrying `level: "CRITICAL"` was written
// as CRITICAL. The output is captured as the JSON lines the cloud writes (through pino).
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLineSink, LogLevels, LogRegistry, prettySink, REDACTED } from '../../cloud/logging.ts';
import { SqliteStore } from '../../cloud/store/sqlite.ts';

const store = new SqliteStore(':memory:');
let levels: LogLevels;

beforeAll(async () => {
  await store.stageConfig('svc-func-ota', { logging: 'INFO' }, '2026-11-21T00:00:00.000Z');
  await store.startDeployment('svc-func-ota', Date.parse('2026-11-21T00:00:00.000Z'), 0);
  levels = new LogLevels(store);
  await levels.refresh();
});
afterAll(() => store.close());

function capture(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter((l) => l !== ''));
      done();
    },
  });
  return { stream, lines };
}

const NOW = Date.parse('2026-11-21T12:00:00.000Z');

describe('reserved log keys', () => {
  it('a field named level, time, function or msg never replaces the record’s own', () => {
    const { stream, lines } = capture();
    const log = new LogRegistry(levels, jsonLineSink(stream), () => NOW).logger('svc-func-ota');
    log.info('update check', { level: 'CRITICAL', time: 'yesterday', function: 'svc-func-admin', msg: 'forged', uuid: 'dev-1' });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      time: '2026-11-21T12:00:00.000Z',
      level: 'INFO',
      function: 'svc-func-ota',
      msg: 'update check',
      field_level: 'CRITICAL',
      field_time: 'yesterday',
      field_function: 'svc-func-admin',
      field_msg: 'forged',
      uuid: 'dev-1',
    });
  });

  it('the level decides whether a record is written, whatever its fields say', () => {
    const { stream, lines } = capture();
    const log = new LogRegistry(levels, jsonLineSink(stream), () => NOW).logger('svc-func-ota');
    log.debug('noise', { level: 'CRITICAL' });
    expect(lines).toEqual([]);
  });

  it('the pretty format prints the record’s own level too', () => {
    const { stream, lines } = capture();
    const log = new LogRegistry(levels, prettySink(stream), () => NOW).logger('svc-func-ota');
    log.warning('device on a revoked version', { level: 'DEBUG' });
    expect(lines).toEqual(['[2026-11-21T12:00:00.000Z] WARNING: svc-func-ota device on a revoked version {"field_level":"DEBUG"}']);
  });

  it('a field named __proto__ is an ordinary field', () => {
    const { stream, lines } = capture();
    const log = new LogRegistry(levels, jsonLineSink(stream), () => NOW).logger('svc-func-ota');
    log.info('x', JSON.parse('{"__proto__": {"level": "CRITICAL"}}') as Record<string, unknown>);
    const record = JSON.parse(lines[0]!);
    expect(record.level).toBe('INFO');
    expect(record.__proto__).toEqual({ level: 'CRITICAL' });
  });
});

describe('pino output', () => {
  it('writes the spec level names and exactly the record keys (no pid, hostname or numeric level)', () => {
    const { stream, lines } = capture();
    const logs = new LogRegistry(levels, jsonLineSink(stream), () => NOW);
    logs.logger('svc-func-ota').warning('w');
    logs.logger('svc-func-ota').critical('c');
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { level: 'WARNING', time: '2026-11-21T12:00:00.000Z', function: 'svc-func-ota', msg: 'w' },
      { level: 'CRITICAL', time: '2026-11-21T12:00:00.000Z', function: 'svc-func-ota', msg: 'c' },
    ]);
  });

  it('redacts signatures, nonces, tokens and keys by path, top level and one level down', () => {
    const { stream, lines } = capture();
    const log = new LogRegistry(levels, jsonLineSink(stream), () => NOW).logger('svc-func-ota');
    log.info('request', {
      uuid: 'dev-1',
      signature: 'MEUCIQ…',
      nonce: 'bm9uY2U=',
      token: 'eyJ…',
      authorization: 'Bearer eyJ…',
      key: 'k',
      headers: { 'x-device-signature': 'sig', 'x-device-nonce': 'n', authorization: 'Bearer x', 'x-device-uuid': 'dev-1' },
      device: { private_key: 'pk', secret: 's' },
    });
    const r = JSON.parse(lines[0]!);
    expect(r).toMatchObject({
      uuid: 'dev-1',
      signature: REDACTED,
      nonce: REDACTED,
      token: REDACTED,
      authorization: REDACTED,
      key: REDACTED,
      headers: { 'x-device-signature': REDACTED, 'x-device-nonce': REDACTED, authorization: REDACTED, 'x-device-uuid': 'dev-1' },
      device: { private_key: REDACTED, secret: REDACTED },
    });
    expect(lines[0]).not.toMatch(/MEUCIQ|bm9uY2U|eyJ/);
  });

  it('each function logs at its effective level, and follows a deployment at runtime', async () => {
    const own = new SqliteStore(':memory:');
    try {
      const lv = new LogLevels(own);
      await lv.refresh();
      const { stream, lines } = capture();
      const logs = new LogRegistry(lv, jsonLineSink(stream), () => NOW);
      const ota = logs.logger('svc-func-ota');
      const admin = logs.logger('svc-func-admin');
      ota.info('hidden at WARNING');
      expect(ota.enabled('INFO')).toBe(false);
      await own.stageConfig('svc-func-ota', { logging: 'DEBUG' }, '2026-11-21T00:00:00.000Z');
      await own.startDeployment('svc-func-ota', NOW, 0);
      await lv.refresh();
      ota.debug('shown at DEBUG');
      admin.info('admin still at WARNING');
      expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['shown at DEBUG']);
    } finally {
      await own.close();
    }
  });

  it('a field named level cannot change the level the record is written at, nor be read as one by the pretty printer', () => {
    const { stream, lines } = capture();
    const log = new LogRegistry(levels, prettySink(stream), () => NOW).logger('svc-func-ota');
    log.info('x', { level: 'CRITICAL' });
    expect(lines[0]).toMatch(/^\[2026-11-21T12:00:00.000Z\] INFO: svc-func-ota x \{"field_level":"CRITICAL"\}$/);
  });
});
