// The firmware core's portable behaviour cases on Node with the in-memory platform (fast). The same
// cases run inside the XS engine in xs-cases.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { caseGroups } from '../../firmware/test-cases/all.ts';
import { createdBoards } from '../../firmware/test-cases/fixtures.ts';

const LEVELS = ['info', 'warning', 'error'];

beforeEach(() => {
  createdBoards.length = 0;
});

// Whatever a case checks, every event-log entry any of its boards wrote must be readable: one of the
// three levels (the OLED's event log page shows its initial), a source and a message.
afterEach(() => {
  for (const tb of createdBoards) {
    for (const e of tb.events) {
      expect(LEVELS, `${tb.identity.uuid}: level of ${JSON.stringify(e)}`).toContain(e.level);
      expect(typeof e.source === 'string' && e.source !== '', `${tb.identity.uuid}: source of ${JSON.stringify(e)}`).toBe(true);
      expect(typeof e.message === 'string' && e.message.trim() !== '', `${tb.identity.uuid}: message of ${JSON.stringify(e)}`).toBe(true);
    }
  }
  createdBoards.length = 0;
});

for (const [group, cases] of Object.entries(caseGroups)) {
  describe(group, () => {
    for (const c of cases) it(c.name, () => c.run());
  });
}
