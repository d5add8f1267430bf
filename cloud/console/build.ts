// npm run build:console: the operator console (cloud/console/src, Preact in TSX) bundled into the
// static files the cloud serves at /console (CONSOLE_DIR, by default cloud/console/dist).
import { fileURLToPath } from 'node:url';
import { DEFAULT_CONSOLE_DIR } from '../config.ts';
import { bundleWebApp } from '../web/bundle.ts';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export function buildConsole(outDir = DEFAULT_CONSOLE_DIR): Promise<void> {
  return bundleWebApp({ entry: here('./src/main.tsx'), html: here('./index.html'), css: here('./app.css') }, outDir);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2] ?? DEFAULT_CONSOLE_DIR;
  await buildConsole(outDir);
  process.stdout.write(`console built into ${outDir}\n`);
}
