// The target procedure (spec 3.6) step by step, with the radio and the source's answers scripted:
// the AP chosen and how it is joined (step 2), nothing cleaned up before a valid token (step 5),
// what each refusal or failure leads to, the lists and records requested (step 6: only UUIDs ever
// go into a path), the counts compared (step 7) with a list that did not arrive never counting as a
// match, and the station always leaving the SoftAP. The air-level runs are in target.cases.ts.
import type { ClientRequest, ClientResponse } from '../src/hal/network.ts';
import type { ScanResult } from '../src/hal/radio.ts';
import { utf8Decode, utf8Encode } from '../src/core/bytes.ts';
import { softApPassword } from '../src/core/provisioning/softap-password.ts';
import { bytesReader } from '../src/core/http/respond.ts';
import { PROVISIONING_INCOMPLETE_PATH, runTargetProcedure, wrapWords, type TargetContext, type TargetOutcome } from '../src/core/provisioning/target.ts';
import { deepEqual, equal, ok, rejects, type TestCase } from './assert.ts';
import { bench, board, readAll } from './fixtures.ts';

const GATEWAY = 'http://192.168.4.1';
const AP = (ssid: string, bssid: string, rssiDbm: number): ScanResult => ({ ssid, bssid, channel: 1, rssiDbm });
const json = (status: number, value: unknown): ClientResponse => ({ status, headers: { 'content-type': 'application/json' }, body: bytesReader(utf8Encode(JSON.stringify(value))) });
const text = (status: number, body: string): ClientResponse => ({ status, headers: {}, body: bytesReader(utf8Encode(body)) });

type Answer = (r: ClientRequest, path: string) => ClientResponse | Promise<ClientResponse>;

/** A source with these controllers and clients (uuid -> record) and backup; `override` answers first. */
function source(o: { controllers?: Record<string, unknown>; clients?: Record<string, unknown>; backup?: string | null; override?: (path: string, r: ClientRequest) => ClientResponse | undefined }): Answer {
  return (r, path) => {
    const over = o.override?.(path, r);
    if (over) return over;
    if (path === '/api/provisioning/token') return json(200, { token: 'tok-9', expires_in: 300 });
    if (r.headers['provisioning-token'] !== 'tok-9') return json(401, { error: 'invalid_token' });
    for (const kind of ['controllers', 'clients'] as const) {
      const set = o[kind] ?? {};
      if (path === `/api/${kind}`) return json(200, Object.keys(set));
      const m = new RegExp(`^/api/${kind}/(.+)$`).exec(path);
      if (m) {
        const id = decodeURIComponent(m[1]!);
        return id in set ? (typeof set[id] === 'string' ? text(200, set[id] as string) : json(200, set[id])) : json(404, { error: 'not_found' });
      }
    }
    if (path === '/backup') return o.backup == null ? json(404, { error: 'backup_not_found' }) : text(200, o.backup);
    return json(404, { error: 'not_found' });
  };
}

function scripted(o: { scan?: ScanResult[]; connect?: () => Promise<{ gatewayUrl: string }>; answer?: Answer; noEthernet?: boolean } = {}) {
  const b = bench();
  const tb = board(b, { role: 'controller' });
  const steps: string[] = [];
  const requests: { r: ClientRequest; body: string }[] = [];
  const logs: string[] = [];
  const hal = {
    ...tb.hal,
    system: { ...tb.hal.system, identity: () => (o.noEthernet ? { ...tb.identity, ethernetMac: undefined } : tb.identity) },
    radio: {
      ...tb.hal.radio,
      scan: async () => {
        steps.push('scan');
        return o.scan ?? [AP('Device-Provisioning', '24:0A:C4:AB:CD:EF', -45)];
      },
      setStationMac: (mac: string) => void steps.push(`station mac ${mac}`),
      setTxPowerDbm: (dbm: number) => void steps.push(`tx ${dbm}`),
      connect: async (c: { ssid: string; password: string; bssid?: string; timeoutMs: number }) => {
        steps.push(`connect ${c.ssid} ${c.bssid} ${c.password} ${c.timeoutMs}`);
        return o.connect ? o.connect() : { gatewayUrl: GATEWAY };
      },
      disconnect: async () => void steps.push('disconnect'),
    },
    network: {
      ...tb.hal.network,
      request: async (r: ClientRequest) => {
        const body = r.body === undefined ? '' : utf8Decode(await readAll(r.body));
        requests.push({ r, body });
        const path = r.url.startsWith(GATEWAY) ? r.url.slice(GATEWAY.length) : r.url;
        steps.push(`${r.method} ${path}`);
        if (!o.answer) throw new Error('no route to host');
        return o.answer(r, path);
      },
    },
  };
  const ctx: TargetContext = { hal, settings: tb.device.settings, records: tb.device.records, local: tb.device.local, log: (level, message) => void logs.push(`${level} ${message}`) };
  return { b, tb, ctx, steps, requests, logs, run: () => runTargetProcedure(ctx) };
}

/** Records left by an interrupted provisioning: the controller is not configured, so it provisions again. */
function leftOver(tb: ReturnType<typeof board>, kind: 'controllers' | 'clients', uuid: string): void {
  tb.device.records.put(kind, uuid, '{}');
  const f = tb.storage.create(PROVISIONING_INCOMPLETE_PATH);
  f.write(utf8Encode('interrupted'));
  f.close();
}

function finished(outcome: TargetOutcome): Extract<TargetOutcome, { kind: 'finished' }> {
  if (outcome.kind !== 'finished') throw new Error(`expected a finished procedure, got ${JSON.stringify(outcome)}`);
  return outcome;
}

export const targetStepCases: TestCase[] = [
  {
    name: 'target steps: the strongest exact-SSID AP, joined with the Ethernet MAC as station MAC, minimum TX power, its BSSID password and 10 s',
    async run() {
      const s = scripted({
        scan: [AP('Device-Provisioning', 'AA:00:00:00:00:01', -80), AP('Device-Provisioning', '24:0A:C4:AB:CD:EF', -45), AP('Device-Provisioning-X', 'AA:00:00:00:00:03', -20), AP('office', 'AA:00:00:00:00:04', -10), AP('Device-Provisioning', 'AA:00:00:00:00:05', -60)],
        answer: () => json(403, { error: 'mac_not_allowed' }),
      });
      equal((await s.run()).kind, 'token_refused', 'outcome');
      deepEqual(s.steps.slice(0, 4), ['scan', `station mac ${s.tb.identity.ethernetMac}`, 'tx 2', `connect Device-Provisioning 24:0A:C4:AB:CD:EF ${softApPassword('24:0A:C4:AB:CD:EF')} 10000`], 'scan, then join');
      ok(s.logs[0]!.startsWith('info ') && s.logs[0]!.includes('no records and no backup'), `the first line says why it provisions (got ${s.logs[0]})`);
      const none = scripted({ scan: [AP('office', 'AA:00:00:00:00:04', -10), AP('device-provisioning', 'AA:00:00:00:00:06', -30)] });
      deepEqual(await none.run(), { kind: 'no_ap' }, 'no AP with the exact SSID');
      deepEqual(none.steps, ['scan'], 'nothing else');
      equal(none.logs.length, 2, 'two lines');
      ok(none.logs[1]!.startsWith('info ') && none.logs[1]!.length > 10, 'the no-AP line at info');
      await rejects(() => scripted({ noEthernet: true }).run(), /Ethernet MAC/, 'a controller without an Ethernet MAC');
    },
  },
  {
    name: 'target steps: a failed join, or a source gone before the token, is connect_failed with the reason; nothing is cleaned up; the SoftAP is left',
    async run() {
      const join = scripted({
        connect: async () => {
          throw new Error('association refused');
        },
      });
      leftOver(join.tb, 'clients', 'lamp-keep');
      deepEqual(await join.run(), { kind: 'connect_failed', reason: 'association refused' }, 'join failed');
      equal(join.requests.length, 0, 'no request');
      ok(join.logs.some((l) => l.startsWith('warning ') && l.includes('24:0A:C4:AB:CD:EF') && l.includes('association refused')), `a warning with the BSSID and reason (got ${JSON.stringify(join.logs)})`);

      const gone = scripted({}); // every request throws
      leftOver(gone.tb, 'clients', 'lamp-keep');
      deepEqual(await gone.run(), { kind: 'connect_failed', reason: 'no route to host' }, 'source unreachable');
      ok(gone.logs.some((l) => l.startsWith('warning ') && l.includes('no route to host')), `a warning with the reason (got ${JSON.stringify(gone.logs)})`);
      equal(gone.steps.at(-1), 'disconnect', 'SoftAP left');
      deepEqual(gone.tb.device.records.list('clients'), ['lamp-keep'], 'records kept: no token, no cleanup');
      ok(gone.tb.storage.size(PROVISIONING_INCOMPLETE_PATH) !== null, 'still marked unfinished: it provisions again at the next boot');
    },
  },
  {
    name: 'target steps: the token request is a JSON POST of UUID and Ethernet MAC; a refusal or a token that is not a string cleans nothing up',
    async run() {
      const refused = scripted({ answer: () => json(409, { error: 'provisioning_disabled' }) });
      leftOver(refused.tb, 'controllers', 'ctl-keep');
      deepEqual(await refused.run(), { kind: 'token_refused', status: 409 }, 'refused');
      const ex = refused.requests[0]!;
      equal(ex.r.method, 'POST', 'method');
      equal(ex.r.url, `${GATEWAY}/api/provisioning/token`, 'URL');
      equal(ex.r.headers['content-type'], 'application/json', 'content type');
      deepEqual(JSON.parse(ex.body), { uuid: refused.tb.identity.uuid, mac: refused.tb.identity.ethernetMac }, 'body');
      ok(refused.logs.some((l) => l.startsWith('warning ') && l.includes('409')), `a warning with the status (got ${JSON.stringify(refused.logs)})`);
      deepEqual(refused.tb.device.records.list('controllers'), ['ctl-keep'], 'records kept');
      equal(refused.steps.at(-1), 'disconnect', 'SoftAP left');

      const notString = scripted({ answer: source({ override: (p) => (p === '/api/provisioning/token' ? json(200, { token: 42 }) : undefined) }) });
      leftOver(notString.tb, 'controllers', 'ctl-keep');
      deepEqual(await notString.run(), { kind: 'token_refused', status: 200 }, 'a numeric token');
      equal(notString.requests.length, 1, 'nothing requested with it');
      deepEqual(notString.tb.device.records.list('controllers'), ['ctl-keep'], 'records kept');
    },
  },
  {
    name: 'target steps: a list that is refused (even with a JSON array body), unreachable or not an array never counts as a match',
    async run() {
      const refused = scripted({ answer: source({ clients: { 'lamp-1': { mac: '02:00:00:00:00:01' } }, override: (p) => (p === '/api/controllers' ? json(500, []) : undefined) }) });
      const a = finished(await refused.run());
      deepEqual([a.ok, a.controllers, a.clients], [false, [0, -1], [1, 1]], 'controllers list refused');
      deepEqual(a.lines, ['Prov fail C 0/-1', ''], 'shown as a failure');
      ok(refused.logs.includes('error Prov fail C 0/-1'), 'logged as an error');
      equal(refused.tb.storage.size(PROVISIONING_INCOMPLETE_PATH) !== null, true, 'the copy stays marked unfinished');
      await refused.b.clock.advance(60_000);
      equal(refused.tb.reboots.length, 0, 'no reboot');

      const broken = scripted({ answer: source({ controllers: { 'ctl-1': {} }, override: (p) => (p === '/api/clients' ? text(200, '[ "lamp-1", ') : undefined) }) });
      const b2 = finished(await broken.run());
      deepEqual([b2.ok, b2.controllers, b2.clients], [false, [1, 1], [0, -1]], 'clients list not JSON');
      deepEqual(b2.lines, ['Prov fail L 0/-1', ''], 'shown as a client failure');
      ok(broken.logs.some((l) => l.startsWith('error ') && l.includes('clients')), `an error naming the list (got ${JSON.stringify(broken.logs)})`);

      const object = scripted({ answer: source({ override: (p) => (p === '/api/controllers' ? json(200, { 'ctl-1': {} }) : undefined) }) });
      const c = finished(await object.run());
      deepEqual([c.ok, c.controllers], [false, [0, -1]], 'a list that is an object');
      deepEqual(object.requests.map((q) => q.r.url.slice(GATEWAY.length)).filter((p) => p.startsWith('/api/controllers')), ['/api/controllers'], 'and no record requested from it');
    },
  },
  {
    name: 'target steps: only UUIDs from a list go into a request path; a record that is not JSON is not written, logged, and fails the count',
    async run() {
      const s = scripted({
        answer: source({
          controllers: { 'ctl-1': { name: 'a' }, '../../config/admin-password': {}, 'ctl-2': 'not json {' },
          override: (p) => (p === '/api/controllers' ? json(200, ['ctl-1', '../../config/admin-password', 7, 'ctl-2']) : undefined),
        }),
      });
      const o = finished(await s.run());
      deepEqual(o.controllers, [1, 4], 'one written of four listed');
      deepEqual(o.lines, ['Prov fail C 1/4', ''], 'a controller count mismatch');
      const paths = s.requests.map((q) => q.r.url.slice(GATEWAY.length));
      deepEqual(paths.filter((p) => p.startsWith('/api/controllers')), ['/api/controllers', '/api/controllers/ctl-1', '/api/controllers/ctl-2'], 'no request for the entries that are not UUIDs');
      deepEqual(s.tb.device.records.list('controllers'), ['ctl-1'], 'only the JSON record written');
      ok(s.logs.some((l) => l.startsWith('warning ') && l.includes('controllers/ctl-2')), `a warning naming the record (got ${JSON.stringify(s.logs)})`);
    },
  },
  {
    name: 'target steps: success is logged at info with the spec lines; the backup\'s absence, arrival, or failure (unreachable, not JSON) is told apart',
    async run() {
      const absent = scripted({ answer: source({ controllers: { 'ctl-1': {} }, backup: null }) });
      leftOver(absent.tb, 'clients', 'old-1');
      const w = absent.tb.device.local.begin();
      w.write(utf8Encode('{"old": true}'));
      w.commit();
      const a = finished(await absent.run());
      deepEqual([a.ok, a.backup, a.lines], [true, 'absent', ['Prov OK 1C 0L', 'Prov OK no backup']], 'no backup on the source');
      ok(absent.logs.includes('info Prov OK 1C 0L / Prov OK no backup'), `the outcome at info (got ${JSON.stringify(absent.logs)})`);
      ok(absent.logs.some((l) => l.startsWith('info ') && l.includes('removed 1 records')), `the cleanup logged at info with its count (got ${JSON.stringify(absent.logs)})`);
      equal(absent.tb.device.local.size(), null, 'the old local backup removed');
      equal(absent.steps.at(-1), 'disconnect', 'SoftAP left');
      equal(absent.tb.storage.size(PROVISIONING_INCOMPLETE_PATH), null, 'the marker removed on success');

      const got = scripted({ answer: source({ backup: '{"outputs": []}' }) });
      const g = finished(await got.run());
      deepEqual([g.ok, g.backup, g.lines], [true, 'received', ['Prov OK 0C 0L', 'Prov OK got backup']], 'a backup received');

      const bad = scripted({ answer: source({ backup: '{"outputs": [' }) });
      const d = finished(await bad.run());
      deepEqual([d.ok, d.backup, d.lines], [false, 'bad', ['Prov OK 0C 0L', 'Prov bad backup']], 'a backup that is not JSON');
      ok(bad.logs.some((l) => l.startsWith('error ') && l.includes('backup')), `the backup failure logged as an error (got ${JSON.stringify(bad.logs)})`);
      equal(bad.tb.device.local.size(), null, 'nothing half-written');

      const down = scripted({
        answer: (r, p) => {
          if (p === '/backup') throw new Error('connection reset');
          return source({})(r, p);
        },
      });
      const e = finished(await down.run());
      deepEqual([e.ok, e.backup], [false, 'bad'], 'the backup request failing');
    },
  },
  {
    name: 'OLED wrapping: a word longer than a line at the start of a text gives no empty line',
    async run() {
      deepEqual(wrapWords('x'.repeat(30), 21), ['x'.repeat(21), 'x'.repeat(9)], 'a long first word');
      deepEqual(wrapWords(`${'y'.repeat(42)} z`, 21), ['y'.repeat(21), 'y'.repeat(21), 'z'], 'exactly two lines of it, then the next word');
    },
  },
];
