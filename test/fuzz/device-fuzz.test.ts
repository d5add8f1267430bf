// The seeded fuzz of a board's device-local API (tools/fuzz/device-fuzz.ts) on a virtual controller
// running the SDK's host build of the production firmware, a short run on every `npm test`;
// `npm run fuzz -- --requests N --seed S` runs it longer. A reset of any kind (an XS abort such as
// memory full or a stack overflow, the task watchdog, a panic) is a failure.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runDeviceFuzz, startFuzzBoard } from '../../tools/fuzz/device-fuzz.ts';

let fuzz: Awaited<ReturnType<typeof startFuzzBoard>>;
beforeAll(async () => {
  fuzz = await startFuzzBoard();
}, 60_000);
afterAll(async () => {
  await fuzz?.close();
});

it('a board answers 1,500 seeded hostile requests on both interfaces with JSON errors, no 5xx, and loses nothing', { timeout: 120_000 }, async () => {
  const seed = Number(process.env.FUZZ_SEED ?? 20261121);
  const report = await runDeviceFuzz(fuzz.target, { requests: 1500, seed });
  const resets = fuzz.board.consoleLines.filter((l) => l.startsWith('HOST ') && !/: listening on /.test(l));
  expect(report.failures, `seed ${seed}: ${JSON.stringify(report.byStatus)}; reboots ${JSON.stringify(fuzz.board.reboots)}; ${resets.join(' | ')}`).toEqual([]);
  // The fuzz reached the firmware's routes, not only its HTTP server's refusals.
  for (const status of ['200', '400', '401', '404']) expect(report.byStatus[status] ?? 0, `status ${status}`).toBeGreaterThan(0);
  expect(fuzz.board.reboots).toEqual([]);
  // Client mistakes are not errors of the board: nothing the fuzz sent is logged as one.
  expect(fuzz.board.consoleLines.filter((l) => /^LOG ERROR/.test(l))).toEqual([]);
});
