// The report's test-bed section (harness/testbed.ts): each virtual board's firmware is its factory
// image, named by the same version, project, ESP-IDF version and file SHA-256 that `fleet image info`
// (describeImage) reads from that image; a physical board the bench did not flash is "not read".
import { describe, expect, it } from 'vitest';
import { CHIPS } from '../../firmware/image/chips.ts';
import { describeImage } from '../../firmware/image/describe.ts';
import { firmwareImage, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import { loadRig } from '../../harness/rig.ts';
import { describeTestbed } from '../../harness/testbed.ts';
import { TWO_BOARD_RIG } from '../helpers/fleet-virtual.ts';

describe('the test bed a report names', () => {
  it("names each virtual board's factory image as fleet image info reads it", { timeout: 120_000 }, async () => {
    const rig = loadRig(TWO_BOARD_RIG);
    const bed = await describeTestbed(rig);
    expect(bed.boards.map((b) => b.id)).toEqual(rig.boards.map((b) => b.id));
    for (const spec of rig.boards) {
      const d = describeImage(await firmwareImage(spec.firmwareVersion, { chip: CHIPS[spec.chip], variant: variantOf(spec) }));
      const board = bed.boards.find((b) => b.id === spec.id)!;
      expect(board.firmware).toEqual({ version: d.app!.version, build: spec.build, imageSha256: d.fileSha256, project: d.app!.projectName, idfVersion: d.app!.idfVersion, source: 'factory image' });
      expect(board.firmware.version).toBe(spec.firmwareVersion);
    }
  });

  it('a physical board the bench did not flash is not read until a scenario runs on it', async () => {
    const rig = loadRig(TWO_BOARD_RIG);
    const physical = { ...rig, boards: [{ ...rig.boards[0]!, kind: 'serial' as const, port: '/dev/ttyUSB9' }] };
    const bed = await describeTestbed(physical as typeof rig);
    expect(bed.boards[0]!.firmware).toEqual({ version: 'unknown', build: rig.boards[0]!.build, source: 'not read (no scenario ran on it)' });
    expect(bed.boards[0]!.where).toBe('/dev/ttyUSB9');
  });
});
