// docs/rig-file.md is checked against the rig schema (harness/rig.ts): every field the schema takes is
// documented, and the documentation names no field the schema does not take.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { RigBoardSchema, RigFileSchema } from '../../harness/rig.ts';

const doc = readFileSync(fileURLToPath(new URL('../../docs/rig-file.md', import.meta.url)), 'utf8');
/** The rows of the field table: their first cell's backticked names, `boards[].x` read as board field x. */
const rows = doc
  .split('\n')
  .filter((l) => l.startsWith('| `'))
  .map((l) => [...l.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));

const boardRows = rows.filter((names) => names[0]!.startsWith('boards[].')).flat().map((n) => n.replace(/^boards\[\]\./, ''));
const topRows = rows.filter((names) => !names[0]!.startsWith('boards[].')).flat();

describe('docs/rig-file.md against the rig schema', () => {
  it('documents every field of a board', () => {
    expect(Object.keys(RigBoardSchema.properties).filter((k) => !boardRows.includes(k))).toEqual([]);
  });

  it('documents every rig-wide field', () => {
    expect(Object.keys(RigFileSchema.properties).filter((k) => !topRows.includes(k))).toEqual([]);
  });

  it('documents no field the schema does not take', () => {
    expect(boardRows.filter((k) => !(k in RigBoardSchema.properties))).toEqual([]);
    expect(topRows.filter((k) => !(k in RigFileSchema.properties))).toEqual([]);
  });
});
