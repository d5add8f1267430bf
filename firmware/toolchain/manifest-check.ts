// What mcconfig lets pass in silence: a manifest's module entry whose file does not exist is left out
// of the build, and a preload name that matches no module is ignored (seen with SDK 8.2.3). The build
// checks both for the project's own manifests (the SDK's have such entries: tls_common.json preloads
// "ssl", which 8.2.3 no longer has), against mcconfig's merged manifest (manifest_flat.json) and the
// makefile it wrote.
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeList } from './makefile.ts';

/** The extensions mcconfig turns into modules (tools/mcmanifest.js), and headers a manifest may name. */
const MODULE_EXTENSIONS = ['.js', '.mjs', '.ts', '.d.ts', '.json', '.c', '.cc', '.cpp', '.h'];

interface Manifest {
  include?: string | string[];
  modules?: Record<string, string | string[]>;
  preload?: string | string[];
  platforms?: Record<string, Manifest>;
}

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The module names the makefile builds: `$(MODULES_DIR)/<name>.xsb`. */
export function builtModuleNames(makefile: string): Set<string> {
  return new Set([...makefile.matchAll(/^\$\(MODULES_DIR\)\/(.+)\.xsb:/gm)].map((m) => m[1]!));
}

/** mcconfig's spelling of a module of a scheme: `embedded:io/digital` is `~.embedded/io/digital` (mcmanifest.js resolvePrefix). */
export const moduleFileName = (name: string) => name.replace(/^([A-Za-z][\w+.-]*):/, '~.$1/');

/**
 * Whether a path is in the SDK: under its root as given, or as resolved (mcconfig writes real paths,
 * so an SDK reached through a symbolic link, such as a .cache/ linked from another checkout, is seen
 * under its real path).
 */
export function inSdk(path: string, sdkRoot: string): boolean {
  const real = existsSync(sdkRoot) ? realpathSync(sdkRoot) : sdkRoot;
  return path.startsWith(`${sdkRoot}/`) || path.startsWith(`${real}/`);
}

/** The preload names of the manifests outside the SDK, for the platform being built (and its "..." fallback). */
export function ownPreloads(makefile: string, sdkRoot: string, platform: string): string[] {
  const names: string[] = [];
  for (const path of makeList(makefile, 'MANIFEST')) {
    if (inSdk(path, sdkRoot)) continue;
    const m = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
    names.push(...list(m.preload));
    const [family] = platform.split('/');
    for (const [key, section] of Object.entries(m.platforms ?? {})) {
      if (key === platform || key === family) names.push(...list(section.preload));
    }
  }
  return names;
}

export function manifestProblems(flat: Manifest, makefile: string, sdkRoot: string, platform: string): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(flat.modules ?? {})) {
    for (const path of list(value)) {
      if (inSdk(path, sdkRoot)) continue;
      if (path.endsWith('*')) {
        const dir = dirname(path);
        if (!existsSync(dir) || readdirSync(dir).length === 0) problems.push(`module entry "${name}": ${path} matches no file`);
      } else if (!existsSync(path) && !MODULE_EXTENSIONS.some((ext) => existsSync(path + ext))) {
        problems.push(`module "${name}": ${path} (.ts, .js, .c, …) does not exist`);
      }
    }
  }
  const built = builtModuleNames(makefile);
  for (const name of ownPreloads(makefile, sdkRoot, platform)) {
    if (name.includes('*')) continue; // mcconfig expands these itself, for JavaScript only
    if (!built.has(moduleFileName(name))) problems.push(`preload "${name}" names no module of the build`);
  }
  return problems;
}
