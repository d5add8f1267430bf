// The same portable cases as core.test.ts, run inside the real XS engine (@agoric/xsnap's worker):
// crypto vectors, the backup store, the token rules, the target and client procedures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { caseGroups } from '../../firmware/test-cases/all.ts';
import { bundleForXs } from '../../firmware/xs/bundle.ts';
import { XsWorker } from '../../firmware/xs/worker.ts';

const ENTRY = fileURLToPath(new URL('../../firmware/test-cases/xs-entry.ts', import.meta.url));
let worker: XsWorker;

beforeAll(async () => {
  worker = await XsWorker.start({ name: 'xs-cases' });
  await worker.evaluate(await bundleForXs(ENTRY));
}, 120_000);
afterAll(() => worker?.close());

async function inXs(request: object): Promise<any> {
  const { reply } = await worker.issueStringCommand(JSON.stringify(request));
  return JSON.parse(reply);
}

it('XS knows the same cases as Node', async () => {
  const names = await inXs({ list: true });
  expect(names).toEqual(Object.fromEntries(Object.entries(caseGroups).map(([g, cases]) => [g, cases.map((c) => c.name)])));
});

for (const [group, cases] of Object.entries(caseGroups)) {
  describe(`in XS: ${group}`, () => {
    cases.forEach((c, index) => {
      it(c.name, async () => {
        const result = await inXs({ group, index });
        expect(result.error ?? null).toBeNull();
        expect(result.ok).toBe(true);
      }, 120_000);
    });
  });
}
