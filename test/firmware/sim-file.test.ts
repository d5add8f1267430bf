// The emulated `file` module on LittleFS semantics (firmware/sim/xs/modules/file.ts) inside XS:
// File.rename answers a boolean and never throws, opening for writing does not truncate, reading past
// the end throws, File.delete answers whether the file was there, the iterator lists "." and "..",
// and folders have no length.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SimEngine } from '../helpers/sim-engine.ts';

let engine: SimEngine;

async function inXs(code: string): Promise<unknown> {
  await engine.run(`try { report({ value: (() => { ${code} })() }); } catch (e) { report({ error: e.message }); }`);
  return (await engine.reports())[0];
}

beforeAll(async () => {
  engine = await SimEngine.start();
}, 120_000);
afterAll(async () => {
  await engine?.close();
});

it('File.rename answers false for a missing source and true after replacing the destination', async () => {
  writeFileSync(join(engine.flashDir, 'a.txt'), 'new');
  writeFileSync(join(engine.flashDir, 'b.txt'), 'old');
  expect(await inXs(`return sdk.file.File.rename('/missing', '/b.txt')`)).toEqual({ value: false });
  expect(await inXs(`return sdk.file.File.rename('/a.txt', '/b.txt')`)).toEqual({ value: true });
  expect(readFileSync(join(engine.flashDir, 'b.txt'), 'utf8')).toBe('new');
});

it('new File(path, true) keeps the bytes of an existing file (no truncation) and writes at its end', async () => {
  writeFileSync(join(engine.flashDir, 'keep.txt'), 'abcdef');
  expect(await inXs(`const f = new sdk.file.File('/keep.txt', true); const n = f.length; f.position = n; f.write('gh'); f.close(); return n;`)).toEqual({ value: 6 });
  expect(readFileSync(join(engine.flashDir, 'keep.txt'), 'utf8')).toBe('abcdefgh');
});

it('reads from position, throws past the end, and throws opening a missing file for reading', async () => {
  writeFileSync(join(engine.flashDir, 'r.txt'), '0123456789');
  expect(await inXs(`const f = new sdk.file.File('/r.txt'); f.position = 4; const s = f.read(String, 3); f.close(); return s;`)).toEqual({ value: '456' });
  expect(await inXs(`const f = new sdk.file.File('/r.txt'); f.position = 8; try { return f.read(ArrayBuffer, 3); } finally { f.close(); }`)).toEqual({ error: 'read past end of file' });
  expect(await inXs(`return new sdk.file.File('/nope.txt')`)).toEqual({ error: 'file not found' });
});

it('File.delete answers whether the file was there; the iterator lists ".", "..", files with a length and folders without', async () => {
  expect(await inXs(`sdk.file.Directory.create('/d'); sdk.file.Directory.create('/d'); const f = new sdk.file.File('/d/x', true); f.write('12'); f.close(); sdk.file.Directory.create('/d/sub'); const it = new sdk.file.Iterator('/d'); const out = []; for (let e = it.next(); e; e = it.next()) out.push([e.name, e.length]); return out.sort();`)).toEqual({
    value: [['.', null], ['..', null], ['sub', null], ['x', 2]], // (undefined lengths arrive as null over JSON)
  });
  expect(await inXs(`return [sdk.file.File.delete('/d/x'), sdk.file.File.delete('/d/x'), sdk.file.File.exists('/d')]`)).toEqual({ value: [true, false, true] });
});
