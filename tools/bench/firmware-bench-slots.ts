// Slot probe of the controller-provisioning target procedure: the live slots (after a collection)
// before every command the target runs, with the command, so that what the procedure holds can be
// followed through its steps (docs/firmware-bench.md, "Slots of the target procedure").
// `npx tsx tools/bench/firmware-bench-slots.ts [controllers=10] [clients=50] [backup bytes=524256]`;
// with SAMPLES=1 one line per command: the live slots above "modules loaded", then the command.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { XsBoard } from '../../firmware/virtual-esp32/xs-board.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { backupOfSize, boardApi as http, controllerIdentity as identity } from './firmware-bench-lib.ts';

const PASSWORD = 'bench-admin-password';


const controllers = Number(process.argv[2] ?? 10);
const clients = Number(process.argv[3] ?? 50);
const backupBytes = Number(process.argv[4] ?? 524_256);
const dir = mkdtempSync(join(tmpdir(), 'fw-slots-'));
const air = new VirtualAir();
const boards: XsBoard[] = [];
try {
  const source = await XsBoard.start({ identity: identity(1), fuseKeyHex: '01'.repeat(32), flashDir: join(dir, 'src'), adminPassword: PASSWORD, air });
  boards.push(source);
  const sauth = { 'visual-token': (await http(source, 'POST', '/api/login', { 'content-type': 'application/json' }, JSON.stringify({ password: PASSWORD }))).token, 'content-type': 'application/json' };
  await http(source, 'PUT', `/api/controllers/bench-ctl-2`, sauth, JSON.stringify({ ethernet_mac: identity(2).ethernetMac, name: 'target' }));
  for (let i = 0; i < controllers - 1; i++) await http(source, 'PUT', `/api/controllers/ctl-${i}`, sauth, JSON.stringify({ ethernet_mac: identity(100 + i).ethernetMac, name: `controller ${i}` }));
  for (let i = 0; i < clients; i++) {
    await http(source, 'PUT', `/api/clients/lamp-${i}`, sauth, JSON.stringify({ mac: identity(200 + i).wifiMac, wifi: { ssid: 'plant-floor', password: 'wifi-secret-123' }, mqtt: { host: '127.0.0.1', port: 1883 }, ca_certificate: TEST_CA_PEM }));
  }
  if (backupBytes > 0) await http(source, 'PUT', '/backup', sauth, backupOfSize(backupBytes));
  await http(source, 'PUT', '/api/provisioning', sauth);
  const samples: string[] = [];
  let max = 0;
  const target = await XsBoard.start({
    identity: identity(2), fuseKeyHex: '02'.repeat(32), flashDir: join(dir, 'tgt'), adminPassword: PASSWORD, air, settings: { resultDisplayMs: 60_000 }, slotMeter: true, deferBoot: true,
    onSlotSample: (live, c) => {
      max = Math.max(max, live);
      const e = c.event as Record<string, unknown> | undefined;
      samples.push(`${live} ${c.type}${e ? ` ${e.kind}${e.type ? `.${e.type}` : ''}${e.id !== undefined ? `#${e.id}` : ''}` : ''}`);
    },
  });
  boards.push(target);
  const loaded = await target.liveSlots();
  await target.boot();
  await target.idle();
  const after = await target.liveSlots();
  process.stdout.write(`modules loaded ${loaded}; after the procedure ${after} (+${after - loaded}); most live between commands ${max} (+${max - loaded})\n`);
  process.stdout.write(`outcome ${JSON.stringify((target.bootResult as any).provisioning.lines)}\n`);
  if (process.env.SAMPLES) for (const s of samples) process.stdout.write(`${Number(s.split(' ')[0]) - loaded} ${s.slice(s.indexOf(' ') + 1)}\n`);
} finally {
  await Promise.all(boards.map((b) => b.close()));
  rmSync(dir, { recursive: true, force: true });
}
