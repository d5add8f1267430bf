import { readFileSync } from 'node:fs';

/** The version of this package, as package.json says. */
export const PACKAGE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
