// What xsl's output says: the size of the linked XS archive (mc.xs.c) on the chip, and the
// warnings of its preload check.
//
// mc.xs.c is C source: the preloaded heap, stack, keys, byte code and strings as constant arrays that
// the chip's build places in flash. It is not compiled here (no Xtensa compiler), so its size is
// counted from its declarations at the ESP32-S3's sizes (ILP32, 16-bit key IDs: XS's txSlot is 16
// bytes, txScript 36, xsHostBuilder 12, a pointer 4) plus its string literals with their NUL. The
// machine code of the host-module glue functions xsl writes is not counted, nor the XS engine.

export const CHIP_SIZES = { slot: 16, pointer: 4, id: 2, script: 36, builder: 12, integer: 4 } as const;

export interface XsArchiveSize {
  /** The total, the sum of the parts below. */
  bytes: number;
  heapSlots: number;
  stackSlots: number;
  keys: number;
  scripts: number;
  codeBytes: number;
  stringBytes: number;
}

/** xsl's `#define mx…Count n`; the counts of tables an app may lack (BigInts, RegExps) are optional. */
function define(source: string, name: string, optional = false): number {
  const m = new RegExp(`^#define ${name} (\\d+)$`, 'm').exec(source);
  if (!m && !optional) throw new Error(`mc.xs.c has no #define ${name}: not an xsl output`);
  return m ? Number(m[1]) : 0;
}

/** The bytes of every C string literal in the text, decoded, each with its NUL. */
export function cStringBytes(source: string): number {
  let total = 0;
  const literal = /"((?:[^"\\\n]|\\.)*)"/g;
  for (const line of source.split('\n')) {
    if (line.startsWith('#include')) continue;
    for (const m of line.matchAll(literal)) total += decodedLength(m[1]!) + 1;
  }
  return total;
}

function decodedLength(body: string): number {
  let n = 0;
  for (let i = 0; i < body.length; i++, n++) {
    if (body[i] !== '\\') continue;
    const next = body[i + 1];
    if (next === 'x') {
      i += 1;
      while (i + 1 < body.length && /[0-9a-fA-F]/.test(body[i + 1]!)) i++;
    } else if (next !== undefined && /[0-7]/.test(next)) {
      let digits = 0;
      while (digits < 3 && i + 1 < body.length && /[0-7]/.test(body[i + 1]!)) (i++, digits++);
    } else {
      i += 1;
    }
  }
  return n;
}

export function xsArchiveSize(source: string): XsArchiveSize {
  const s = CHIP_SIZES;
  const heapSlots = define(source, 'mxHeapCount');
  const stackSlots = define(source, 'mxStackCount');
  const keys = define(source, 'mxKeysCount');
  const scripts = define(source, 'mxScriptsCount');
  const names = define(source, 'mxNamesCount');
  const symbols = define(source, 'mxSymbolsCount');
  const slotData = define(source, 'mxSlotCount', true);
  const bigInts = define(source, 'mxBigIntCount', true);
  const regExps = define(source, 'mxRegExpCount', true);
  let codeBytes = 0;
  for (const m of source.matchAll(/^static const txU1 gxCode\d+\[(\d+)\] = \{/gm)) codeBytes += Number(m[1]);
  let builders = 0;
  for (const m of source.matchAll(/^static const xsHostBuilder gxBuilders\d*\[(\d+)\] = \{/gm)) builders += Number(m[1]);
  const stringBytes = cStringBytes(source);
  const bytes =
    (heapSlots + stackSlots) * s.slot +
    (keys + names + symbols + slotData) * s.pointer +
    keys * s.id + // gxColors
    (bigInts + regExps) * s.integer +
    scripts * s.script +
    builders * s.builder +
    codeBytes +
    stringBytes;
  return { bytes, heapSlots, stackSlots, keys, scripts, codeBytes, stringBytes };
}

export interface XslReport {
  instances: number;
  keys: number;
  /** `### warning: <module>: <path>: not frozen | no const`, by module. */
  warnings: { module: string; text: string }[];
}

/** xsl's summary line and its preload check's warnings. */
export function parseXslOutput(output: string): XslReport {
  const summary = /^### (\d+) instances, (\d+) keys/m.exec(output);
  const warnings: XslReport['warnings'] = [];
  for (const m of output.matchAll(/^### warning: ([^:]+): (.*)$/gm)) warnings.push({ module: m[1]!, text: m[2]! });
  return { instances: summary ? Number(summary[1]) : 0, keys: summary ? Number(summary[2]) : 0, warnings };
}

/** `ReferenceError: module "x" not found` and the like: the first error line xsl printed. */
export function xslError(output: string): string | undefined {
  return /^### (.*Error.*)$/m.exec(output)?.[1]?.replace(/!$/, '') ?? /^(\w*Error: .*)$/m.exec(output)?.[1];
}

/**
 * The RegExp objects the preload left in the archive (module-level RegExps of preloaded modules):
 * XS 8.2.3 corrupts memory running one. Such a RegExp has no match data in flash, so each exec()
 * allocates it, and fxAllocateRegExpData (xs/sources/xsre.c) takes it from the system heap where the
 * garbage collector then treats it as one of its chunks: it writes its marks into the allocator's
 * header before the block and, compacting, replaces the pointer with whatever that header held; the
 * block itself is never freed. Seen on the virtual board as a segmentation fault in
 * fx_RegExp_prototype_exec after a collection during the exec (docs/moddable-regexp.md).
 */
export function preloadedRegExps(source: string): number {
  return (source.match(/\.kind = XS_REGEXP_KIND\}/g) ?? []).length;
}

export const PRELOADED_REGEXP_PROBLEM =
  'RegExp objects made at module level in preloaded modules: XS 8.2.3 corrupts memory running one (docs/moddable-regexp.md). Make the RegExp in the function that uses it (grep -nE "^(export )?const [A-Za-z_0-9]+ = /" firmware/src)';
