// The record store itself (spec 2.6, docs/firmware-records.md): record names are UUIDs only, a
// record that is JSON but not an object feeds nothing (no MAC, no crash), and the allowlist holds
// exactly the MACs of the records that carry one.
import { RecordStore } from '../src/core/records.ts';
import { deepEqual, equal, ok, rejects, type TestCase } from './assert.ts';
import { bench, board } from './fixtures.ts';

function store() {
  const c = board(bench(), { role: 'controller' });
  return { c, records: c.device.records as RecordStore };
}

export const recordCases: TestCase[] = [
  {
    name: 'records: a name that is not a UUID is refused and nothing is written',
    async run() {
      const { c, records } = store();
      for (const bad of ['../config/admin-password', 'a/b', '', '-lead', 'x'.repeat(65)]) {
        await rejects(async () => records.put('clients', bad, '{}'), /not a record UUID/, JSON.stringify(bad));
        equal(records.has('clients', bad), false, `${JSON.stringify(bad)}: not there`);
      }
      deepEqual(c.storage.list('/records/clients'), [], 'no file written');
      records.put('clients', 'lamp-1', '{}');
      deepEqual(records.list('clients'), ['lamp-1'], 'a UUID is fine');
    },
  },
  {
    name: 'records: JSON that is not an object (null, array, string, number) reads as no record object, and feeds no MAC',
    async run() {
      const { records } = store();
      for (const [uuid, text] of [['n', 'null'], ['a', '["mac", "02:00:00:00:00:01"]'], ['s', '"02:00:00:00:00:01"'], ['d', '5'], ['bad', '{"mac": ']] as const) {
        records.put('clients', uuid, text);
        equal(records.getText('clients', uuid), text, `${text}: the text is kept`);
        equal(records.get('clients', uuid), null, `${text}: get() is null`);
        equal(records.macOf('clients', uuid), null, `${text}: no MAC`);
      }
      records.put('clients', 'ok', '{"mac": "02:00:00:00:00:0a"}');
      deepEqual(records.get('clients', 'ok'), { mac: '02:00:00:00:00:0a' }, 'an object is read');
      deepEqual([...records.allowlist()], ['02:00:00:00:00:0A'], 'only the record with a MAC is in the allowlist');
    },
  },
  {
    name: 'records: the allowlist holds client MACs and controller Ethernet MACs, normalized, and nothing for records without one',
    async run() {
      const { records } = store();
      records.put('clients', 'lamp-1', '{"mac": "02-00-00-c0-00-01"}');
      records.put('clients', 'lamp-2', '{"name": "no mac"}');
      records.put('clients', 'lamp-3', '{"ethernet_mac": "02:00:00:E0:00:77"}');
      records.put('controllers', 'ctl-1', '{"ethernet_mac": "02:00:00:e0:00:01"}');
      records.put('controllers', 'ctl-2', '{"mac": "02:00:00:C0:00:99"}');
      const list = [...records.allowlist()].sort();
      deepEqual(list, ['02:00:00:C0:00:01', '02:00:00:E0:00:01'], 'exactly the MAC field of each kind');
      ok(!list.includes(null as unknown as string), 'no null entry');
    },
  },
];
