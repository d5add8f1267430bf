// Vitest global set-up: the virtual boards' firmware builds (tools/moddable/prebuild-virtual.ts) before any
// test starts a board, so that a build's minute on a fresh machine is not spent inside a test's time
// limit. Cached in .cache/: on a second run this only checks that the builds are there.
import { prebuild } from '../../tools/moddable/prebuild-virtual.ts';

export default async function setup(): Promise<void> {
  const t0 = performance.now();
  let built = 0;
  const n = await prebuild((line) => {
    if (/ built in /.test(line)) built++;
    process.stderr.write(`${line}\n`);
  });
  if (built > 0) process.stderr.write(`virtual board firmware: ${built} of ${n} variants built in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}
