// The firmware core's portable behaviour cases on Node with the in-memory platform (fast). The same
// cases run inside the XS engine in xs-cases.test.ts.
import { describe, it } from 'vitest';
import { caseGroups } from '../../firmware/test-cases/all.ts';

for (const [group, cases] of Object.entries(caseGroups)) {
  describe(group, () => {
    for (const c of cases) it(c.name, () => c.run());
  });
}
