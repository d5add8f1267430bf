// What CI can check of the Moddable platform without the SDK or a chip (docs/moddable-build.md):
// the manifest names every module the firmware imports, under the name XS resolves it by, and
// preloads the ones that must not cost RAM; every native the TypeScript declares has its C
// definition with the xsmc signature; the partition table the manifest points at fits the flash.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const FIRMWARE = resolve('firmware');
const PLATFORM = join(FIRMWARE, 'src/platform/moddable');
const manifest = JSON.parse(readFileSync(join(PLATFORM, 'manifest.json'), 'utf8')) as {
  build: Record<string, string>;
  creation: { chunk: { initial: number }; heap: { initial: number }; stack: number; main: string };
  config: Record<string, unknown>;
  defines: { fuse: { hmac_key: number } };
  typescript: { tsconfig: { compilerOptions: Record<string, unknown> } };
  modules: Record<string, string | string[]>;
  preload: string[];
  resources: Record<string, string>;
};

/** The SDK and our types/ declarations: every bare specifier the platform may import. */
const SDK_MODULES = ['Resource', 'commodetto/Bitmap', 'commodetto/Poco', 'commodetto/parseBMF', 'embedded:io/serial', 'ethernet', 'file', 'mc/config', 'modules', 'mqtt', 'net', 'ota', 'preference', 'securesocket', 'sntp', 'socket', 'ssd1306', 'time', 'timer', 'wifi'];
/** The portable crypto fallback: loaded on demand (config crypto: pure), never preloaded. */
const FALLBACK = ['src/core/crypto/pure', 'src/core/crypto/gcm'];

const IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;

/** Value imports of a source file (type-only imports are erased by tsc and never reach XS). */
function importsOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => m[1]!);
}

/** The XS module name of a file: its path under firmware/, without extension (the manifest's scheme). */
function moduleName(file: string): string {
  return relative(FIRMWARE, file).replace(/\\/g, '/').replace(/\.(ts|js)$/, '');
}

/** Every module reachable from the entry, by relative imports; bare specifiers collected apart. */
function closure(entry: string): { modules: Set<string>; bare: Set<string> } {
  const modules = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string) => {
    const name = moduleName(file);
    if (modules.has(name)) return;
    modules.add(name);
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else bare.add(spec);
    }
  };
  visit(join(PLATFORM, 'main.ts'));
  return { modules, bare };
}

/** What a manifest entry maps to module names: "dir/*" covers the folder's own .ts files only. */
function covered(name: string): boolean {
  for (const [target, sources] of Object.entries(manifest.modules)) {
    for (const source of ([] as string[]).concat(sources)) {
      if (!target.endsWith('*')) {
        if (target === name && existsSync(resolve(PLATFORM, `${source}.ts`))) return true;
        continue;
      }
      const prefix = target.slice(0, -1);
      const folder = resolve(PLATFORM, source.slice(0, -1));
      if (name.startsWith(prefix) && !name.slice(prefix.length).includes('/') && existsSync(join(folder, `${name.slice(prefix.length)}.ts`))) return true;
    }
  }
  return false;
}

describe('the Moddable manifest', () => {
  const { modules, bare } = closure(join(PLATFORM, 'main.ts'));

  it('names every module main.ts reaches, under the name XS resolves its relative imports to', () => {
    const missing = [...modules].filter((name) => !covered(name));
    expect(missing).toEqual([]);
    expect(manifest.creation.main).toBe('src/platform/moddable/main');
  });

  it('has one entry per core folder, so every core module is in the build', () => {
    const folders = ['', ...readdirSync(join(FIRMWARE, 'src/core'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => `${d.name}/`)];
    for (const folder of folders) expect(manifest.modules[`src/core/${folder}*`], `src/core/${folder}*`).toBe(`../../core/${folder}*`);
    expect(manifest.modules['src/hal/*']).toBe('../../hal/*');
    expect(manifest.modules['src/platform/moddable/hal/*']).toBe('./hal/*');
  });

  it('preloads every module main.ts reaches except main itself, and nothing that does not exist', () => {
    const expected = [...modules].filter((name) => name !== manifest.creation.main).sort();
    expect([...manifest.preload].sort()).toEqual(expected);
  });

  it('imports only SDK modules and its own declared ones', () => {
    expect([...bare].filter((spec) => !SDK_MODULES.includes(spec))).toEqual([]);
    for (const spec of ['ota', 'ssd1306', 'ethernet', 'mqtt']) expect(readFileSync(join(PLATFORM, `types/${spec}.d.ts`), 'utf8')).toContain(`declare module '${spec}'`);
  });

  it('lists the @noble modules of the portable fallback and keeps the fallback out of the preload', () => {
    const noble = new Set<string>();
    const visit = (file: string) => {
      for (const spec of importsOf(file)) {
        const target = spec.startsWith('@noble/') ? resolve('node_modules', spec) : spec.startsWith('.') ? resolve(dirname(file), spec) : null;
        if (!target || !target.includes('node_modules')) continue;
        const name = relative(resolve('node_modules'), target).replace(/\\/g, '/').replace(/\.js$/, '');
        if (noble.has(name)) continue;
        noble.add(name);
        visit(target.endsWith('.js') ? target : `${target}.js`);
      }
    };
    for (const name of FALLBACK) visit(join(FIRMWARE, `${name}.ts`));
    for (const name of noble) expect(manifest.modules[name], name).toBe(`$(NODE_MODULES)/${name}`);
    const listed = Object.keys(manifest.modules).filter((key) => key.startsWith('@noble/'));
    expect(listed.sort()).toEqual([...noble].sort());
    for (const name of [...FALLBACK, ...noble]) expect(manifest.preload).not.toContain(name);
    expect(readFileSync(join(PLATFORM, 'hal/board.ts'), 'utf8')).toContain("Modules.importNow('src/core/crypto/pure')");
    expect(resolve(PLATFORM, manifest.build.NODE_MODULES!)).toBe(resolve('node_modules'));
  });

  it('sets the TypeScript options the SDK needs with TypeScript 5.9, and the esp32s3 heaps', () => {
    const options = manifest.typescript.tsconfig.compilerOptions;
    expect(options).toMatchObject({ target: 'es2024', lib: ['es2024'], rewriteRelativeImportExtensions: true });
    expect([manifest.creation.chunk.initial, manifest.creation.heap.initial, manifest.creation.stack]).toEqual([78_848, 4_928, 512]);
    expect(manifest.config).toMatchObject({ format: 'Gray256', build: 'production', crypto: 'psa' });
    const debug = JSON.parse(readFileSync(join(PLATFORM, 'manifest_debug.json'), 'utf8')) as { include: string; config: Record<string, unknown> };
    expect(debug).toMatchObject({ include: './manifest.json', config: { build: 'debug' } });
  });

  it('names an eFuse key block and ships the font resources', () => {
    expect(manifest.defines.fuse.hmac_key).toBeGreaterThanOrEqual(0);
    expect(manifest.defines.fuse.hmac_key).toBeLessThanOrEqual(5);
    for (const ext of ['bmf', 'bits']) expect(existsSync(resolve(PLATFORM, `${manifest.resources['*']}.${ext}`))).toBe(true);
  });
});

describe('the native functions', () => {
  const declared = [...readFileSync(join(PLATFORM, 'native/native.d.ts'), 'utf8').matchAll(/declare function native\(name: '([a-z0-9_]+)'\)/g)].map((m) => m[1]!);
  const cFiles = readdirSync(join(PLATFORM, 'native')).filter((name) => name.endsWith('.c'));
  const cSource = new Map(cFiles.map((name) => [name, readFileSync(join(PLATFORM, 'native', name), 'utf8')]));

  it('each one declared in native.d.ts has exactly one C definition with the xsmc signature', () => {
    expect(declared.length).toBeGreaterThan(20);
    for (const name of declared) {
      const definitions = [...cSource.values()].flatMap((text) => [...text.matchAll(new RegExp(`^void ${name}\\(xsMachine \\*the\\)\\s*\\{`, 'gm'))]);
      expect(definitions.length, name).toBe(1);
    }
  });

  it('every xsmc function in C is declared (destructors are host hooks, not natives)', () => {
    const defined = [...cSource.values()].flatMap((text) => [...text.matchAll(/^void (xs_fw_[a-z0-9_]+)\(xsMachine \*the\)/gm)].map((m) => m[1]!));
    expect(defined.sort()).toEqual([...declared].sort());
  });

  it('the TypeScript binds only declared natives, with one string literal each (what xsc compiles)', () => {
    const hal = join(PLATFORM, 'hal');
    for (const file of readdirSync(hal).filter((name) => name.endsWith('.ts'))) {
      const text = readFileSync(join(hal, file), 'utf8');
      for (const m of text.matchAll(/\bnative\(([^)]*)\)/g)) {
        const literal = /^'([a-z0-9_]+)'$/.exec(m[1]!);
        expect(literal, `${file}: native(${m[1]})`).not.toBeNull();
        expect(declared, file).toContain(literal![1]);
      }
    }
  });

  it('C files are prefixed, and each says which ESP-IDF API it uses', () => {
    for (const [name, text] of cSource) {
      expect(name).toMatch(/^fw_[a-z0-9_]+\.c$/);
      expect(text.startsWith('/*'), name).toBe(true);
      expect(text.slice(0, text.indexOf('*/')), name).toMatch(/ESP-IDF/);
    }
  });
});

/** The rows of an ESP-IDF partitions.csv: name, type, subtype, offset, size (all given, in hex). */
function partitionRows(text: string): { name: string; type: string; subtype: string; offset: number; size: number }[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [name, type, subtype, offset, size] = line.split(',').map((field) => field.trim());
      return { name: name!, type: type!, subtype: subtype!, offset: Number(offset), size: Number(size) };
    });
}

describe('the partition table of the Moddable build', () => {
  const csvPath = resolve(PLATFORM, manifest.build.PARTITIONS_FILE!);
  const entries = partitionRows(readFileSync(csvPath, 'utf8'));
  const sdkconfig = readFileSync(resolve(PLATFORM, manifest.build['SDKCONFIGPATH ?=']!, 'sdkconfig.defaults'), 'utf8');
  const flashMb = Number(/^CONFIG_ESPTOOLPY_FLASHSIZE="(\d+)MB"$/m.exec(sdkconfig)?.[1]);

  it('is the one table the virtual boards read', () => {
    expect(csvPath).toBe(join(FIRMWARE, 'partitions.csv'));
  });

  it('fits the flash the build configures, without overlaps, after the table at 0x8000', () => {
    expect(flashMb).toBe(8);
    const sorted = [...entries].sort((a, b) => a.offset - b.offset);
    let end = 0x9000;
    for (const p of sorted) {
      expect(p.offset, p.name).toBeGreaterThanOrEqual(end);
      end = p.offset + p.size;
    }
    expect(end).toBeLessThanOrEqual(flashMb * 1024 * 1024);
  });

  it('has what the manifest uses: two OTA slots and otadata (ota module), the "storage" data partition (LittleFS)', () => {
    const byName = new Map(entries.map((p) => [p.name, p]));
    expect(byName.get('ota_0')).toMatchObject({ type: 'app', subtype: 'ota_0' });
    expect(byName.get('ota_1')).toMatchObject({ type: 'app', subtype: 'ota_1' });
    expect(byName.get('otadata')).toMatchObject({ type: 'data', subtype: 'ota' });
    expect(byName.get('storage')?.type).toBe('data');
    for (const p of entries) expect(Number.isInteger(p.offset) && Number.isInteger(p.size) && p.size > 0, p.name).toBe(true);
    for (const slot of ['ota_0', 'ota_1']) expect(byName.get(slot)!.offset % 0x10000, slot).toBe(0);
  });
});
