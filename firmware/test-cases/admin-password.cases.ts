// Setting the admin password on the serial console (docs/serial-console.md, docs/firmware-visual-
// token.md): a refused password is answered with the rule it broke, and changes nothing.
import { equal, ok, type TestCase } from './assert.ts';
import { ADMIN_PASSWORD, bench, board, call, typeConsole as type } from './fixtures.ts';


export const adminPasswordCases: TestCase[] = [
  {
    name: 'console password: too short or too long is ERR invalid_password naming the 8 to 128 rule; the old password still works',
    async run() {
      const c = board(bench(), { role: 'controller' });
      await c.device.boot();
      for (const bad of ['short', 'x'.repeat(129)]) {
        const answer = await type(c, `password ${bad}`);
        ok(answer.startsWith('ERR invalid_password ') && answer.includes('8 to 128'), `the rule is named (got ${answer.slice(0, 80)})`);
      }
      equal((await call(c, 'POST', '/api/login', { body: { password: ADMIN_PASSWORD } })).status, 200, 'the old password still works');
      ok((await type(c, `password ${'n'.repeat(128)}`)).startsWith('OK '), '128 characters accepted');
      equal((await call(c, 'POST', '/api/login', { body: { password: 'n'.repeat(128) } })).status, 200, 'the new password works');
    },
  },
];
