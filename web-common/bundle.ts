// Bundles a browser app (TypeScript/TSX with Preact, and the CSS it imports) with esbuild, in
// memory, when its server starts: no build step between `npm ci` and the page, nothing generated in
// the tree, nothing fetched from a CDN. esbuild comes with tsx, a dependency.
import { build } from 'esbuild';

export interface WebBundle {
  /** The app's script (ES module). */
  js: string;
  /** The CSS the app imports, bundled ('' when none). */
  css: string;
}

export async function bundleWebApp(entry: string): Promise<WebBundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    outdir: 'out',
    entryNames: 'app',
    logLevel: 'silent',
  });
  const file = (ext: string) => result.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? '';
  return { js: file('.js'), css: file('.css') };
}
