// Where the farm finds labgrid's source (harness/farm/coordinator.ts): $LABGRID_SOURCE, else
// ../shared/labgrid beside the repository when it is there. The farm runs labgrid's own coordinator,
// so the farm tests need that source besides the Moddable SDK (README, "Set up"); without it they and
// `fleet farm coordinator` fail saying which variable to set.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { labgridMissing, locateLabgrid, SHARED_LABGRID } from '../../harness/farm/coordinator.ts';
import { FarmError } from '../../harness/farm/errors.ts';
import { runFleet } from '../helpers/fleet-cli.ts';

const empty = mkdtempSync(`${tmpdir()}/labgrid-none-`);
afterAll(() => rmSync(empty, { recursive: true, force: true }));

describe("finding labgrid's source", () => {
  it('takes $LABGRID_SOURCE when set, else ../shared/labgrid beside the repository', () => {
    expect(SHARED_LABGRID).toBe(resolve('..', 'shared', 'labgrid'));
    // This run's source, wherever it was found: the farm tests need one (farmOrFail).
    const found = locateLabgrid();
    expect(locateLabgrid({ LABGRID_SOURCE: found.root }, empty)).toEqual({ root: found.root, from: 'LABGRID_SOURCE' });
    expect(locateLabgrid({}, found.root)).toEqual({ root: found.root, from: '../shared/labgrid' });
  });

  it('with neither, says which variable to set', () => {
    expect(() => locateLabgrid({}, empty)).toThrow(FarmError);
    expect(labgridMissing({}, empty)).toBe(
      `labgrid's source was not found: set LABGRID_SOURCE to a labgrid checkout (the farm runs labgrid's own coordinator from it), or put one at ${empty}`,
    );
  });

  it('a LABGRID_SOURCE that is not labgrid is named, the fallback not taken', () => {
    expect(labgridMissing({ LABGRID_SOURCE: empty })).toBe(`LABGRID_SOURCE=${empty} is not labgrid's source (no labgrid/remote/coordinator.py there): point it at a labgrid checkout`);
  });

  it('fleet farm coordinator exits 12 with that sentence', async () => {
    const run = await runFleet(['farm', 'coordinator', '--listen', '127.0.0.1:0', '--dir', empty], { env: { LABGRID_SOURCE: empty } });
    expect(run.code).toBe(12);
    expect(run.stderr).toContain(`LABGRID_SOURCE=${empty} is not labgrid's source`);
  });
});
