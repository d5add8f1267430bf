// Where the Moddable SDK is, found as Moddable's own tools find it (docs/moddable-build.md): $MODDABLE
// (the root of an SDK checkout), else ../shared/moddable-sdk beside the repository when it is there;
// and which SDK it is. The firmware build (tools/moddable/), its tests and the bench report
// (harness/testbed.ts) all ask here.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** The fallback when $MODDABLE is not set: an SDK beside the repository, where one is. */
export const SHARED_SDK = resolve(REPO_ROOT, '..', 'shared', 'moddable-sdk');
/** Something the build cannot go on without; `exitCode` 4 is the CLI's "bad configuration". */
export class SdkSetupError extends Error {
  override name = 'SdkSetupError';
  readonly exitCode = 4;
}

export interface SdkSource {
  /** The SDK folder as found (read-only as far as we are concerned). */
  root: string;
  from: 'MODDABLE' | '../shared/moddable-sdk';
  /** The SDK's release, e.g. 8.2.3 (its SNAPSHOT.md tag or `git describe`), or "unknown". */
  version: string;
  /** The commit it was taken from, or a digest of its tools' sources when it names none. */
  commit: string;
}

const REQUIRED_FILES = ['tools/mcconfig.js', 'xs/makefiles/lin/xsl.mk', 'build/makefiles/lin/tools.mk'];

/**
 * The one place that finds the Moddable SDK (the firmware build, its tests, the bench report): $MODDABLE
 * when set, else `fallback` (../shared/moddable-sdk) when it exists. Without either it throws, naming
 * the variable to set.
 */
export function locateSdk(env: NodeJS.ProcessEnv = process.env, fallback = SHARED_SDK): SdkSource {
  const given = env.MODDABLE;
  const from = given ? 'MODDABLE' : '../shared/moddable-sdk';
  const root = given ? resolve(given) : fallback;
  if (given && !isAbsolute(given)) throw new SdkSetupError(`MODDABLE must be an absolute path (the SDK's makefiles refuse a relative one): ${given}`);
  if (!existsSync(root)) {
    throw new SdkSetupError(
      given
        ? `MODDABLE=${given} does not exist: point it at a Moddable SDK 8.2.3 checkout`
        : `The Moddable SDK was not found: set MODDABLE to the root of a Moddable SDK 8.2.3 checkout (as the SDK's own tools expect), or put one at ${fallback}`,
    );
  }
  const missing = REQUIRED_FILES.filter((f) => !existsSync(join(root, f)));
  if (missing.length > 0) throw new SdkSetupError(`${root} is not a Moddable SDK: ${missing.join(', ')} missing`);
  return { root, from, ...sdkIdentity(root) };
}

/** The version and commit of an SDK folder: its SNAPSHOT.md, else git, else a digest of its sources. */
export function sdkIdentity(root: string): { version: string; commit: string } {
  const snapshot = join(root, 'SNAPSHOT.md');
  if (existsSync(snapshot)) {
    const text = readFileSync(snapshot, 'utf8');
    const version = /tag `([^`]+)`/.exec(text)?.[1];
    const commit = /commit ([0-9a-f]{40})/.exec(text)?.[1];
    if (version && commit) return { version, commit };
  }
  if (existsSync(join(root, '.git'))) {
    const head = readGitHead(root);
    if (head) return { version: readGitTag(root, head) ?? 'git', commit: head };
  }
  return { version: 'unknown', commit: digestSources(root) };
}

function readGitHead(root: string): string | undefined {
  try {
    const head = readFileSync(join(root, '.git', 'HEAD'), 'utf8').trim();
    if (/^[0-9a-f]{40}$/.test(head)) return head;
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    if (!ref) return undefined;
    const loose = join(root, '.git', ref);
    if (existsSync(loose)) return readFileSync(loose, 'utf8').trim();
    const packed = readFileSync(join(root, '.git', 'packed-refs'), 'utf8');
    return new RegExp(`^([0-9a-f]{40}) ${ref.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm').exec(packed)?.[1];
  } catch {
    return undefined;
  }
}

function readGitTag(root: string, commit: string): string | undefined {
  try {
    const packed = readFileSync(join(root, '.git', 'packed-refs'), 'utf8');
    return new RegExp(`^${commit} refs/tags/(.+)$`, 'm').exec(packed)?.[1];
  } catch {
    return undefined;
  }
}

/** A digest of the names, sizes and modification times under xs/ and tools/: what the tools are built from. */
function digestSources(root: string): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = statSync(path);
      if (st.isDirectory()) walk(path);
      else hash.update(`${path.slice(root.length)}\0${st.size}\0${st.mtimeMs}\n`);
    }
  };
  for (const top of ['xs', 'tools', 'build/makefiles']) if (existsSync(join(root, top))) walk(join(root, top));
  return hash.digest('hex');
}
