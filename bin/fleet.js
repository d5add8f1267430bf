#!/usr/bin/env node
// Entry point of the `fleet` command. The sources are TypeScript; the command runs compiled to
// JavaScript (bin/cli-build.js, docs/cli-start.md), built at `npm ci` and again whenever a source
// changed. Should compiling fail, it runs from the sources through tsx, as before, and says so.
import { pathToFileURL } from 'node:url';
import { buildCli, freshEntry } from './cli-build.js';

// `fleet … | head` closes the pipe early: that is not an error.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

let entry = freshEntry();
if (!entry) {
  try {
    entry = await buildCli();
  } catch (err) {
    process.stderr.write(`fleet: compiling the command failed, running it from the TypeScript sources: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`);
  }
}
let main;
if (entry) ({ main } = await import(pathToFileURL(entry).href));
else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../tools/fleet.ts'));
}
process.exitCode = await main(process.argv);
