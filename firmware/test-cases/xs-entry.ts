// The portable test cases inside XS: the host sends {"list": true} or {"group", "index"}; the answer
// is set on the returned object's `result` once the case's promise settles (the worker drains every
// promise job before it replies; docs/xs-engine.md).
import { utf8Decode, utf8Encode } from '../src/core/bytes.ts';
import { caseGroups } from './all.ts';
import { createdBoards } from './fixtures.ts';

function answer(value: unknown): ArrayBuffer {
  const bytes = utf8Encode(JSON.stringify(value));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

(globalThis as unknown as { handleCommand: (m: ArrayBuffer) => { result?: ArrayBuffer } }).handleCommand = (message) => {
  const request = JSON.parse(utf8Decode(new Uint8Array(message))) as { list?: boolean; group?: string; index?: number };
  const out: { result?: ArrayBuffer } = {};
  if (request.list) {
    out.result = answer(Object.fromEntries(Object.entries(caseGroups).map(([g, cases]) => [g, cases.map((c) => c.name)])));
    return out;
  }
  const testCase = caseGroups[request.group ?? '']?.[request.index ?? -1];
  if (!testCase) {
    out.result = answer({ ok: false, error: `no case ${request.group}#${request.index}` });
    return out;
  }
  createdBoards.length = 0; // only core.test.ts inspects them; here they would pile up case after case
  testCase.run().then(
    () => (out.result = answer({ ok: true })),
    (err: unknown) => (out.result = answer({ ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) })),
  );
  return out;
};
