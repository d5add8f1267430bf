// The README's Node floor (package.json engines, "Node.js 20.19 or newer") holds for every package
// `npm ci` installs: a package whose engines exclude it warns EBADENGINE on every install, and may
// use what that Node lacks (docs/node-floor.md).
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as { packages: Record<string, { version?: string; engines?: unknown }> };
const floor = semver.minVersion(pkg.engines.node)!.version;

describe('the Node floor', () => {
  it('is the one the README states', () => {
    expect(floor).toBe('20.19.0');
    expect(readFileSync(new URL('README.md', root), 'utf8')).toContain('Node.js 20.19 or newer');
  });

  it('satisfies the engines of every installed package', () => {
    const refused = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, p]) => {
        const node = (p.engines as { node?: unknown } | undefined)?.node;
        return typeof node === 'string' && !semver.satisfies(floor, node) ? [`${path.replace(/^.*node_modules\//, '')}@${p.version} wants node ${node}`] : [];
      });
    expect(refused).toEqual([]);
  });
});
