// The `fleet` command compiled to JavaScript, so that a start does not compile TypeScript
// (docs/cli-start.md). esbuild bundles tools/fleet.ts with the packages left to node_modules and the
// dynamic imports split into chunks loaded when a command needs them. The build lives in
// node_modules/.cache/fleet-cli/<digest of this checkout's path>/ beside a manifest of every source it read, with each
// source's size, modification time and SHA-256: a start uses the build only when every source still
// has its recorded content (the digest decides; the time only spares reading unchanged files), and
// rebuilds it otherwise. Never a stale build.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
/** The command, and the cloud's worker process that `fleet serve` starts for each worker beyond one. */
const ENTRIES = { fleet: 'tools/fleet.ts', 'cloud-worker': 'cloud/cluster/worker.ts' };
/** The files that shape the build besides the sources esbuild reports: this builder and the compiler settings. */
const buildInputs = (root) => [fileURLToPath(import.meta.url), join(root, 'tsconfig.json')];
/** Builds older than this, and not the current one, are removed (a running `fleet serve` may still load chunks of its own). */
const KEEP_OLD_MS = 24 * 3600_000;
const MANIFEST_VERSION = 1;

/**
 * The folder of this checkout's builds, in node_modules/.cache/ (where tools keep such caches): the
 * build's imports of packages resolve from its own real path, so it must sit inside the node_modules
 * it runs with, whatever a symlinked .cache/ points at. A worktree sharing node_modules with another
 * checkout gets its own folder (named by the checkout's path).
 */
export function cacheDir(root = ROOT) {
  const at = resolve(root);
  const key = createHash('sha256').update(at).digest('hex').slice(0, 16);
  return join(at, 'node_modules', '.cache', 'fleet-cli', key);
}

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

function readManifest(dir) {
  try {
    const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    return m && m.version === MANIFEST_VERSION && typeof m.entry === 'string' && m.inputs && typeof m.inputs === 'object' ? m : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The entry file of a build whose every input still has the content it was built from, or undefined.
 * Costs one stat per source (about 300) and a read only of the files whose size or time moved.
 */
export function freshEntry(root = ROOT) {
  const dir = cacheDir(root);
  const manifest = readManifest(dir);
  if (!manifest || manifest.node !== process.versions.node.split('.')[0]) return undefined;
  for (const [file, [size, mtimeMs, digest]] of Object.entries(manifest.inputs)) {
    let st;
    try {
      st = statSync(file);
    } catch {
      return undefined;
    }
    if (st.size === size && st.mtimeMs === mtimeMs) continue;
    if (st.size !== size || sha256(file) !== digest) return undefined;
  }
  const entry = join(dir, manifest.entry);
  return existsSync(entry) ? entry : undefined;
}

/**
 * esbuild, with each source's `import.meta.url` pinned to the source's own file: the sources find
 * their neighbours (web pages, the partition table, worker scripts) beside themselves, not beside
 * the build.
 */
function pinMetaUrl() {
  return {
    name: 'pin-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8');
        const url = JSON.stringify(pathToFileURL(args.path).href);
        return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' };
      });
    },
  };
}

/** Builds the command into a new folder, records its manifest, and returns the entry file. */
export async function buildCli(root = ROOT) {
  const esbuild = await import('esbuild');
  const dir = cacheDir(root);
  mkdirSync(dir, { recursive: true });
  const name = `b-${Date.now()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const outdir = join(dir, name);
  const result = await esbuild.build({
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).filter(([, file]) => existsSync(join(root, file)))),
    // The supervisor starts the compiled worker, not the worker's source (cloud/cluster/supervisor.ts).
    define: { FLEET_COMPILED_WORKER: JSON.stringify(join(outdir, 'cloud-worker.js')) },
    absWorkingDir: root,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    packages: 'external',
    outdir,
    metafile: true,
    sourcemap: 'linked',
    logLevel: 'silent',
    plugins: [pinMetaUrl()],
  });
  const inputs = {};
  for (const file of [...Object.keys(result.metafile.inputs).map((f) => resolve(root, f)), ...buildInputs(root)].filter(existsSync)) {
    const st = statSync(file);
    inputs[file] = [st.size, st.mtimeMs, sha256(file)];
  }
  const manifest = { version: MANIFEST_VERSION, node: process.versions.node.split('.')[0], esbuild: esbuild.version, entry: join(name, 'fleet.js'), inputs };
  // Written whole and renamed: a start that reads it meanwhile sees the old manifest or the new.
  const tmp = join(dir, `manifest.${process.pid}.${randomBytes(3).toString('hex')}.tmp`);
  writeFileSync(tmp, JSON.stringify(manifest));
  renameSync(tmp, join(dir, 'manifest.json'));
  removeOldBuilds(dir, name);
  return join(outdir, 'fleet.js');
}

function removeOldBuilds(dir, keep) {
  for (const entry of readdirSync(dir)) {
    if (entry === keep || !/^b-\d+-/.test(entry) && !entry.endsWith('.tmp')) continue;
    const path = join(dir, entry);
    try {
      if (Date.now() - statSync(path).mtimeMs > KEEP_OLD_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed by another start meanwhile.
    }
  }
}

/** `node bin/cli-build.js` (npm's prepare step, `npm run build:cli`): builds unless the build is fresh. */
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const fresh = freshEntry();
    const entry = fresh ?? (await buildCli());
    process.stdout.write(`fleet: ${fresh ? 'the compiled command is up to date' : 'compiled the command'} (${relative(ROOT, dirname(entry))})\n`);
  } catch (err) {
    // Not fatal to `npm ci`: the command then runs from its sources and says why at each start.
    process.stderr.write(`fleet: compiling the command failed; it will run from the TypeScript sources: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}
