#!/usr/bin/env node
// Entry point of the `fleet` command. The sources are TypeScript; tsx compiles them on load so that
// there is no build step between `npm ci` and `npx fleet`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../tools/fleet.ts');
process.exitCode = await main(process.argv);
