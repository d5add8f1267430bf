// The slot budget of the controller-provisioning target procedure (spec 3.6), on a virtual board
// running platform/moddable in XS: what the board holds live between commands, from the boot to the
// end of the procedure, must fit the esp32s3 creation's 4,928 slots with a quarter left for what
// only lives inside a command (docs/firmware-bench.md, "Slots"). Not timed: a slot count is
// deterministic (the same figure run to run), so the limit is firm.
//
// Counted from "modules loaded" (XS's built-ins and the preloaded modules are in flash on a device):
// the boot's own state (Device, HAL, the emulated SDK's objects) plus the procedure's. The board
// collects garbage before every command (XsBoardOptions.slotMeter) through an empty command, not an
// `eval`, which would keep a slot per command alive (docs/xs-engine.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { XsBoard } from '../../firmware/virtual-esp32/xs-board.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { backupOfSize, boardApi as http, controllerIdentity } from '../../tools/bench/firmware-bench-lib.ts';

/** Moddable's esp32s3 creation (research/moddable-esp32.md). */
const ESP32S3_SLOTS = 4928;
/** A quarter of the heap is left for what a command allocates and holds only while it runs. */
export const BOOT_AND_TARGET_SLOT_LIMIT = ESP32S3_SLOTS - ESP32S3_SLOTS / 4;
/** How much more the last part of the procedure (the backup's segments) may hold than its first. */
const GROWTH_TOLERANCE = 32;

const PASSWORD = 'slot-budget-password';
const CONTROLLERS = 4;
const CLIENTS = 24;
let dir: string;
const boards: XsBoard[] = [];

const identity = (n: number) => controllerIdentity(n, 'budget-ctl');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'xs-slots-'));
});
afterAll(async () => {
  await Promise.all(boards.splice(0).map((b) => b.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('slot budget of the target procedure on an XS board', () => {
  it(`boot + target procedure (${CONTROLLERS} C, ${CLIENTS} L, 128 KB backup) hold at most ${BOOT_AND_TARGET_SLOT_LIMIT} slots between commands, not growing with the work`, async () => {
    const air = new VirtualAir();
    const source = await XsBoard.start({ identity: identity(1), fuseKeyHex: '01'.repeat(32), flashDir: join(dir, 'source'), adminPassword: PASSWORD, air });
    boards.push(source);
    const auth = { 'visual-token': (await http(source, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token, 'content-type': 'application/json' };
    await http(source, 'PUT', '/api/controllers/budget-ctl-2', auth, JSON.stringify({ ethernet_mac: identity(2).ethernetMac, name: 'target' }));
    for (let i = 0; i < CONTROLLERS - 1; i++) await http(source, 'PUT', `/api/controllers/ctl-${i}`, auth, JSON.stringify({ ethernet_mac: identity(100 + i).ethernetMac, name: `controller ${i}` }));
    for (let i = 0; i < CLIENTS; i++) {
      await http(source, 'PUT', `/api/clients/lamp-${i}`, auth, JSON.stringify({ mac: identity(200 + i).wifiMac, wifi: { ssid: 'plant-floor', password: 'wifi-secret-123' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM }));
    }
    await http(source, 'PUT', '/backup', auth, backupOfSize(128 * 1024));
    await http(source, 'PUT', '/api/provisioning', auth);

    const samples: number[] = [];
    const target = await XsBoard.start({
      identity: identity(2),
      fuseKeyHex: '02'.repeat(32),
      flashDir: join(dir, 'target'),
      adminPassword: PASSWORD,
      air,
      settings: { resultDisplayMs: 60_000 },
      slotMeter: true,
      deferBoot: true,
      onSlotSample: (live) => samples.push(live),
    });
    boards.push(target);
    const loaded = await target.liveSlots();
    const result = (await target.boot()) as { provisioning: { ok?: boolean; lines?: string[] } };
    await target.idle();
    expect(result.provisioning.lines).toEqual([`Prov OK ${CONTROLLERS}C ${CLIENTS}L`, 'Prov OK got backup']);

    const held = samples.map((n) => n - loaded);
    const most = Math.max(...held);
    // The figure, for the log of a run (docs/firmware-bench.md keeps the history).
    process.stdout.write(`slot budget: boot + target procedure hold at most +${most} slots between commands (limit ${BOOT_AND_TARGET_SLOT_LIMIT}, ${held.length} commands)\n`);
    expect(most).toBeLessThanOrEqual(BOOT_AND_TARGET_SLOT_LIMIT);
    // Nothing accumulates per command, record or segment: the last 40 % of the commands (the
    // backup's ~90 segments) hold no more than the first 60 % (the lists and records).
    const cut = Math.floor(held.length * 0.6);
    expect(Math.max(...held.slice(cut))).toBeLessThanOrEqual(Math.max(...held.slice(0, cut)) + GROWTH_TOLERANCE);
  }, 120_000);
});
