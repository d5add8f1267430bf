// Bundles one of the project's web apps (docs/web-kit.md): its page `web/index.html` and its entry
// `web/src/main.tsx` (Preact in TSX, and the CSS it imports), by esbuild, in memory, once per process,
// the first time the page is asked for. No build step between `npm ci` and the page, nothing generated
// in the tree, nothing fetched from a CDN. esbuild comes with tsx, a dependency; it is imported only by
// a process that serves a page.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One file of a page: what it is, its bytes, and the strong validator they are served with. */
export interface PageFile {
  type: string;
  body: Buffer;
  etag: string;
}

/** The three files of a page: index.html, app.js (one ES module), app.css. */
export interface WebBundle {
  html: PageFile;
  js: PageFile;
  css: PageFile;
}

const bundles = new Map<string, Promise<WebBundle>>();

function pageFile(type: string, text: string): PageFile {
  const body = Buffer.from(text);
  return { type: `${type}; charset=utf-8`, body, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"` };
}

async function bundle(webDir: string): Promise<WebBundle> {
  const { build } = await import('esbuild');
  const [html, result] = await Promise.all([
    readFile(join(webDir, 'index.html'), 'utf8'),
    build({
      entryPoints: [join(webDir, 'src', 'main.tsx')],
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
    }),
  ]);
  const text = (ext: string) => result.outputFiles.find((f) => f.path.endsWith(ext))?.text ?? '';
  return { html: pageFile('text/html', html), js: pageFile('text/javascript', text('.js')), css: pageFile('text/css', text('.css')) };
}

/** The app in `webDir`, bundled once per process (a failed bundle is tried again at the next call). */
export function webBundle(webDir: string): Promise<WebBundle> {
  let b = bundles.get(webDir);
  if (!b) {
    b = bundle(webDir);
    bundles.set(webDir, b);
    b.catch(() => bundles.delete(webDir));
  }
  return b;
}
