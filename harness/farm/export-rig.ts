// `fleet farm export <rig>`: a rig's boards published to a labgrid coordinator. Virtual boards are
// started here (one air: the rig is one radio neighbourhood) and published at their RFC 2217 ports;
// physical boards at the RFC 2217 URL the rig gives (ser2net, esp_rfc2217_server). Each board is
// health-checked, gets a place `<exporter>-<board>` matching its resource and tagged with what it is
// (chip, role, build, MAC, bench, rig, health), then the exporter and its warden (warden.ts) run
// until stop(), which tags the places offline and withdraws the resources.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHIPS } from '../../firmware/image/chips.ts';
import { firmwareImage, variantOf } from '../../firmware/sdk-host/firmware-image.ts';
import { productPartitions } from '../../firmware/image/product-partitions.ts';
import { VirtualAir } from '../virtual-board.ts';
import { describeError } from '../bench.ts';
import { flashBoard } from '../flash/flash-board.ts';
import { planFlash, type FlashPlan } from '../flash/inputs.ts';
import { RigError, type BoardSpec, type RigSpec } from '../rig.ts';
import { openTransport } from '../transport/open.ts';
import { VirtualBoard } from '../virtual-board.ts';
import { ClientSession, CoordinatorChannel } from './client.ts';
import { FarmError } from './errors.ts';
import { LabgridExporter, RESOURCE_CLASS, type ExportedPort } from './exporter.ts';
import { checkHealth, farmBoardSpec } from './health.ts';
import { HEALTH, LEASE_TAG } from './tags.ts';
import { Warden } from './warden.ts';

export interface ExportedBoard {
  board: BoardSpec;
  place: string;
  url: string;
  tags: Record<string, string>;
}

export interface RunningExport {
  boards: ExportedBoard[];
  /** Set when the coordinator ended the registration. */
  readonly ended: string | undefined;
  stop(): Promise<void>;
}

/** An exporter's name and its places' names: labgrid's, a lower-case letter then letters, digits, -, _. */
export function exporterName(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(value)) throw new FarmError('refused', `--name: an exporter name is letters, digits, ., _ and -, got "${value}"`);
  return value;
}

function urlOf(port: string): { host: string; port: number } {
  const m = /^rfc2217:\/\/([^/:]+):(\d+)$/.exec(port)!;
  return { host: m[1]!, port: Number(m[2]) };
}

export async function exportRig(rig: RigSpec, o: { coordinator: string; name: string; image?: FlashPlan; log: (line: string) => void }): Promise<RunningExport> {
  const local = rig.boards.filter((b) => b.kind === 'serial');
  if (local.length) throw new RigError(`${local.map((b) => `${b.id} (${b.port})`).join(', ')} on a local serial port: a farm reaches boards over the network, so serve the port over RFC 2217 (ser2net, esp_rfc2217_server) and give the rig its rfc2217:// URL`);
  const channel = await CoordinatorChannel.open(o.coordinator);
  const work = mkdtempSync(join(tmpdir(), 'fleet-farm-export-'));
  const air = new VirtualAir();
  air.addInfrastructureAp({ ssid: rig.siteWifi.ssid, password: rig.siteWifi.password, bssid: 'AC:DE:48:00:00:01', position: rig.siteWifi.position });
  const virtual: VirtualBoard[] = [];
  let exporter: LabgridExporter | undefined;
  let warden: Warden | undefined;
  // The places as the coordinator pushes them: a quarantine tag is refused the moment it is set. (The
  // coordinator holds its lock while it waits for our set_acquired answer, so a GetPlaces then would wait too.)
  let watch: ClientSession | undefined;
  const exported: ExportedBoard[] = [];
  const stop = async () => {
    await warden?.stop();
    // Not handed out while away; a quarantined board stays quarantined, to be repaired when back.
    const now = await channel.places().catch(() => []);
    for (const e of exported) {
      const health = now.find((p) => p.name === e.place)?.tags?.health;
      if (health && health !== HEALTH.quarantined) await channel.call('SetPlaceTags', { placename: e.place, tags: { health: 'offline' } }).catch(() => undefined);
    }
    exporter?.withdraw();
    watch?.close();
    channel.close();
    await Promise.allSettled(virtual.map((b) => b.stop()));
    rmSync(work, { recursive: true, force: true });
  };
  try {
    for (const spec of rig.boards) {
      let url = spec.port ?? '';
      if (spec.kind === 'virtual') {
        const b = new VirtualBoard(structuredClone(spec), { air, workDir: work });
        virtual.push(b);
        o.log(`export: starting virtual board ${spec.id}`);
        await b.start();
        await b.releaseConsole();
        url = b.rfc2217Url;
      }
      exported.push({ board: spec, place: `${o.name}-${spec.id}`, url, tags: {} });
    }
    // Checked first; then the resources, then the places that match them with their tags, so that
    // no job gets a place whose port is not there yet.
    await Promise.all(
      exported.map(async (e) => {
        const spec = { ...farmBoardSpec(e.board.id, e.url, { role: e.board.role, build: e.board.build, chip: e.board.chip }), ...(e.board.resetMethod ? { resetMethod: e.board.resetMethod } : {}), ...(e.board.baudRate ? { baudRate: e.board.baudRate } : {}) };
        let health: string = HEALTH.ok;
        let mac = e.board.wifiMac;
        try {
          mac = (await checkHealth(spec, e.board.wifiMac || undefined)).mac;
        } catch (err) {
          health = HEALTH.quarantined;
          o.log(`export: ${describeError(err)}: quarantined`);
        }
        e.tags = { chip: e.board.chip, role: e.board.role, build: e.board.build, mac: mac.toLowerCase(), bench: o.name, rig: rig.name, health };
      }),
    );
    const wardenPlaces = new Map(exported.map((e) => [e.place, { group: e.board.id, repair: () => repairBoard(e, o.image) }]));
    warden = new Warden(channel, wardenPlaces, o.log);
    const w = warden;
    const ports: ExportedPort[] = exported.map((e) => ({ group: e.board.id, ...urlOf(e.url), speed: e.board.baudRate ?? 115200 }));
    watch = await ClientSession.start(o.coordinator, `${hostname()}/fleet-exporter-${o.name}`);
    const seen = watch;
    const quarantined = (g: string) => w.quarantined.has(g) || seen.placesByName.get(`${o.name}-${g}`)?.tags?.health === HEALTH.quarantined;
    exporter = await LabgridExporter.start(o.coordinator, o.name, ports, { refuse: (g) => (quarantined(g) ? `board ${g} is quarantined (it failed its health check); it is handed out again after a repair passes` : undefined), onEnd: (why) => o.log(`export: ${why}`) });
    const places = new Map((await channel.places()).map((p) => [p.name!, p]));
    for (const e of exported) {
      const before = places.get(e.place);
      if (before?.tags?.health === HEALTH.quarantined) e.tags.health = HEALTH.quarantined;
      if (!before) await channel.call('AddPlace', { name: e.place });
      const pattern = `${o.name}/${e.board.id}/${RESOURCE_CLASS}`;
      if (!before?.matches?.some((m) => `${m.exporter}/${m.group}/${m.cls}` === pattern)) await channel.call('AddPlaceMatch', { placename: e.place, pattern });
      await channel.call('SetPlaceTags', { placename: e.place, tags: { ...e.tags, [LEASE_TAG]: '' } });
    }
    await warden.tick();
    warden.start();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    boards: exported,
    get ended() {
      return exporter?.ended;
    },
    stop,
  };
}

/** Flashes the rig's image again (a virtual board: its factory image; a physical one: --flash's), then the health check. */
async function repairBoard(e: ExportedBoard, image: FlashPlan | undefined): Promise<void> {
  const spec = farmBoardSpec(e.board.id, e.url, e.tags);
  let plan = image;
  let dir: string | undefined;
  if (!plan && e.board.kind === 'virtual') {
    dir = mkdtempSync(join(tmpdir(), 'fleet-farm-repair-'));
    const file = join(dir, `${e.board.id}-${e.board.firmwareVersion}.bin`);
    writeFileSync(file, await firmwareImage(e.board.firmwareVersion, { chip: CHIPS[e.board.chip], variant: variantOf(e.board) }));
    plan = planFlash([file], productPartitions());
  }
  try {
    if (plan) {
      const t = await openTransport(e.url, 115200);
      try {
        await flashBoard({ transport: t, plan, productTable: productPartitions(), baudRate: 921_600, chip: e.board.chip, resetMethod: spec.resetMethod ?? 'classic', reset: false });
      } finally {
        await t.disconnect().catch(() => undefined);
      }
    }
    await checkHealth(spec, e.tags.mac);
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
