// Bundles a firmware entry (TS or JS) into one script that the XS worker can `evaluate`: a single
// IIFE with every import inlined, since the worker evaluates plain scripts and has no module loader
// wired to our files.
import { build } from 'esbuild';

export interface BundleOptions {
  /** esbuild `define`: identifier -> JS expression text (e.g. `{ DEBUG: 'false' }`). */
  define?: Record<string, string>;
}

export async function bundleForXs(entry: string, opts: BundleOptions = {}): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'iife',
    // 'neutral' keeps Node built-ins and browser shims out: XS is neither.
    platform: 'neutral',
    // This XS build mis-initialises ES2022 class fields (e.g. @noble/curves' static fields fail with
    // "Point: get ?: not initialized yet"); es2019 lowers them to constructor assignments.
    target: 'es2019',
    // ...but es2019 predates BigInt literals, which esbuild would then refuse; XS supports them and
    // the curve code cannot work without them.
    supported: { bigint: true },
    mainFields: ['module', 'main'],
    conditions: ['import', 'default'],
    define: opts.define ?? {},
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error(`esbuild produced no output for ${entry}`);
  return file.text;
}
