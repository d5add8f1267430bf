// The build step of a web app the cloud serves (the operator console): esbuild bundles its TypeScript
// (TSX with Preact) into one script and copies its page and stylesheet, into a folder of static files.
// No CDN: everything the page loads is in that folder.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export interface WebAppSources {
  /** The TSX entry point. */
  entry: string;
  /** The page (no inline script or style: the CSP forbids them) and its stylesheet. */
  html: string;
  css: string;
}

/** Writes index.html, app.js and app.css into `outDir`. */
export async function bundleWebApp(src: WebAppSources, outDir: string): Promise<void> {
  // esbuild is a development dependency: imported only when a build runs, never by the serving cloud.
  const { build } = await import('esbuild');
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [src.entry],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    minify: true,
    sourcemap: false,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
  });
  copyFileSync(src.html, join(outDir, 'index.html'));
  copyFileSync(src.css, join(outDir, 'app.css'));
}
