// Steps several scenarios share: seeding a source controller and reading boot events.
import { check, type ScenarioContext } from '../bench.ts';
import type { BenchBoard } from '../board.ts';
import { TEST_CA_PEM } from '../../firmware/test-cases/fixtures.ts';
import { API_PATHS, recordPath } from '../../firmware/src/core/api-paths.ts';

export function mac(n: number): string {
  const h = n.toString(16).padStart(4, '0').toUpperCase();
  return `02:00:00:C0:${h.slice(0, 2)}:${h.slice(2)}`;
}

/** A configuration export of about `bytes` bytes (JSON). */
export function backupJson(bytes: number): string {
  const items: string[] = [];
  let size = 40;
  for (let i = 0; size < bytes - 64; i++) {
    const item = `{"id":${i},"name":"Light ${String(i).padStart(5, '0')}","level":${i % 100}}`;
    items.push(item);
    size += item.length + 1;
  }
  const head = `{"outputs":[${items.join(',')}],"pad":"`;
  return head + ' '.repeat(Math.max(0, bytes - head.length - 2)) + '"}';
}

export interface SourceSeed {
  target?: BenchBoard;
  /** Register the target's Ethernet MAC under this UUID instead of its own. */
  targetUuid?: string;
  extraControllers?: number;
  clients?: number;
  clientBoards?: BenchBoard[];
  backup?: string | null;
}

/** Fills a source controller through its API as the configurator would. */
export async function seedSource(ctx: ScenarioContext, source: BenchBoard, seed: SourceSeed): Promise<{ controllers: number; clients: number }> {
  const auth = { ...(await ctx.login(source)), 'content-type': 'application/json' };
  const put = async (path: string, body: unknown) => {
    const r = await source.http('ethernet', 'PUT', path, { headers: auth, body: JSON.stringify(body) });
    check(r.status === 201 || r.status === 200, `PUT ${path} answered ${r.status} ${r.text}`);
  };
  let controllers = 0;
  if (seed.target) {
    await put(recordPath('controllers', seed.targetUuid ?? seed.target.spec.uuid), { name: seed.target.spec.id, ethernet_mac: seed.target.spec.ethernetMac });
    controllers++;
  }
  for (let i = 0; i < (seed.extraControllers ?? 0); i++, controllers++) await put(recordPath('controllers', `ctl-${i}`), { name: `controller ${i}`, ethernet_mac: mac(0x100 + i) });
  const site = ctx.rig.siteWifi;
  const clientRecord = (m: string) => ({ mac: m, wifi: { ssid: site.ssid, password: site.password }, mqtt: { host: ctx.broker.host, port: ctx.broker.port, tls: false }, ca_certificate: TEST_CA_PEM });
  let clients = 0;
  for (let i = 0; i < (seed.clients ?? 0); i++, clients++) await put(recordPath('clients', `lamp-${i}`), { name: `lamp ${i}`, ...clientRecord(mac(0x800 + i)) });
  for (const c of seed.clientBoards ?? []) {
    await put(recordPath('clients', c.spec.uuid), { name: c.spec.id, ...clientRecord(c.spec.wifiMac) });
    clients++;
  }
  if (seed.backup !== undefined && seed.backup !== null) {
    const r = await source.http('ethernet', 'PUT', API_PATHS.backup, { headers: auth, body: seed.backup });
    check(r.status === 200, `PUT /backup answered ${r.status}`);
  }
  return { controllers, clients };
}

export async function enableProvisioning(ctx: ScenarioContext, source: BenchBoard): Promise<{ ssid: string; password: string }> {
  const r = await source.http('ethernet', 'PUT', API_PATHS.provisioning, { headers: await ctx.login(source) });
  check(r.status === 200, `enabling provisioning answered ${r.status} ${r.text}`);
  check(r.json.ssid === 'Device-Provisioning', `SSID is ${r.json.ssid}`);
  return r.json;
}

/** The next structured event of a kind on a board's console. */
export async function nextEvent(board: BenchBoard, event: string, fromIndex: number, timeoutMs = 60_000): Promise<Record<string, any>> {
  const line = await board.waitForLine(new RegExp(`^EVT \\{"event":"${event}"`), timeoutMs, fromIndex);
  return JSON.parse(line.slice(4)) as Record<string, any>;
}

/**
 * Whether the broker received a publish matching `match`, waiting up to `timeoutMs`. The publish
 * travels over the board's MQTT connection and the event that reports it over the console: either
 * may arrive first, so a check right after the event loses the race now and then (a flake).
 */
export async function publishSeen(ctx: ScenarioContext, match: (p: ScenarioContext['broker']['publishes'][number]) => boolean, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!ctx.broker.publishes.some(match)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
