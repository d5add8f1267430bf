#!/usr/bin/env node
// Entry point of the `fleet` command. The sources are TypeScript; tsx compiles them on load so that
// there is no build step between `npm ci` and `npx fleet`.
import { register } from 'tsx/esm/api';

register();
// `fleet … | head` closes the pipe early: that is not an error.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
const { main } = await import('../tools/fleet.ts');
process.exitCode = await main(process.argv);
