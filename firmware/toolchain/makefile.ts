import { createHash } from 'node:crypto';

// Reading the makefile mcconfig generates (its variables and lists), never editing it.

/** A generated makefile's simple assignment `NAME = value`. */
export function makeVariable(makefile: string, name: string): string | undefined {
  return new RegExp(`^${name} = (.*)$`, 'm').exec(makefile)?.[1]?.trim();
}

/** The entries of a multi-line list assignment: `NAME =\` (or `NAME = \`) then one `\t…\` per line. */
export function makeList(makefile: string, name: string): string[] {
  const head = new RegExp(`^${name} = ?\\\\$`, 'm').exec(makefile);
  if (!head) return [];
  const items: string[] = [];
  for (const line of makefile.slice(head.index + head[0].length + 1).split('\n')) {
    const item = line.replace(/\\$/, '').trim();
    if (item !== '') items.push(item);
    if (!line.endsWith('\\')) break;
  }
  return items;
}

/**
 * A digest of which source builds which target (the makefile's rules). mcconfig's makefiles rebuild a
 * target when its source is newer, not when the target now comes from another source (a manifest
 * that maps a module name elsewhere): when this changes, earlier output must go.
 */
export function ruleDigest(makefile: string): string {
  const rules = makefile.split('\n').filter((line) => /^\$\((MODULES_DIR|TMP_DIR|LIB_DIR)\)\/[^:]+:/.test(line));
  return createHash('sha256').update(rules.join('\n')).digest('hex');
}
