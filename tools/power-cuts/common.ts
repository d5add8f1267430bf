// What "lost nothing" means after a power cut, checked the same way on a memory board and on a
// virtual board in XS: through the board's own API (what a user sees) and on its flash (what is
// there). The states before and after the interrupted operation are snapshots taken through the API
// (the "old" before the cut, the "new" from the same operation run without a cut); after the cut
// and a reboot every item must be old or new, never anything else.
import { createHash } from 'node:crypto';
import { EVENT_LOG_FOLDER, HEALTH_FOLDER } from '../../firmware/src/core/flash.ts';
import type { DeviceIdentity } from '../../firmware/src/hal/system.ts';
import { API_PATHS, recordPath, recordsPath } from '../../firmware/src/core/api-paths.ts';
import { MAC_FIELD } from '../../firmware/src/core/records.ts';

export type Kind = 'controllers' | 'clients';
export const KINDS: readonly Kind[] = ['controllers', 'clients'];

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
}

/** A booted board: its API, and its flash as files. */
export interface BoardAccess {
  http(method: string, path: string, o?: { headers?: Record<string, string>; body?: string | object }): Promise<Answer>;
  files(): Map<string, Uint8Array>;
}

/** What a user can read back: the backup's content and every record's JSON, by UUID. */
export interface FlashState {
  backup: string | null;
  records: Record<Kind, Record<string, string>>;
}

export const PASSWORD = 'power-cut-admin-password';

/** The backup a board holds before the operation, and the one the operation writes. */
export const OLD_BACKUP = JSON.stringify({ version: 'old', outputs: Array.from({ length: 150 }, (_, i) => ({ id: i, name: `Old light ${i}` })) });
export const NEW_BACKUP = JSON.stringify({ version: 'new', outputs: Array.from({ length: 400 }, (_, i) => ({ id: i, name: `New light ${i}`, level: i % 100 })) });

/** A controller's identity; `n` and `platform` keep the MACs of different boards apart. */
export function controllerIdentity(uuid: string, n: number, platform: 'memory' | 'board'): DeviceIdentity {
  const h = n.toString(16).padStart(2, '0').toUpperCase();
  const tag = platform === 'memory' ? '1' : '2';
  return { uuid, role: 'controller', ethernetMac: `24:0A:C4:E${tag}:00:${h}`, wifiMac: `24:0A:C4:1${tag}:00:${h}`, hardwareClass: 'ctl-s3', productHex: '0x00c0ffee', firmwareVersion: '2026.01.01', build: 'production' };
}

export const sha256Hex = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');

export async function login(b: BoardAccess): Promise<Record<string, string>> {
  const r = await b.http('POST', API_PATHS.login, { body: { password: PASSWORD } });
  if (r.status !== 200) throw new Error(`login: ${r.status} ${r.text.slice(0, 200)}`);
  return { 'visual-token': r.json.token };
}

export async function snapshot(b: BoardAccess, auth: Record<string, string>): Promise<FlashState> {
  const get = await b.http('GET', API_PATHS.backup, { headers: auth });
  if (get.status !== 200 && get.status !== 404) throw new Error(`GET /backup: ${get.status} ${get.text.slice(0, 200)}`);
  const records: FlashState['records'] = { controllers: {}, clients: {} };
  for (const kind of KINDS) {
    const list = await b.http('GET', recordsPath(kind), { headers: auth });
    if (list.status !== 200 || !Array.isArray(list.json)) throw new Error(`GET /api/${kind}: ${list.status} ${list.text.slice(0, 200)}`);
    for (const uuid of list.json as string[]) {
      const r = await b.http('GET', recordPath(kind, uuid), { headers: auth });
      if (r.status !== 200) throw new Error(`GET /api/${kind}/${uuid}: ${r.status}`);
      records[kind][uuid] = JSON.stringify(r.json);
    }
  }
  return { backup: get.status === 200 ? get.text : null, records };
}

export function sameState(a: FlashState, b: FlashState): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const show = (v: string | null | undefined) => (v == null ? 'absent' : v.length > 40 ? `${JSON.stringify(v.slice(0, 40))}… (${v.length} chars)` : JSON.stringify(v));

/**
 * Every invariant of a board booted again after a cut; the problems found (none: recovered).
 * `old` and `neu` bound what each item may be; `mustBe` (when given) is the only state allowed.
 */
export async function checkRecovered(b: BoardAccess, old: FlashState, neu: FlashState, o: { mustBe?: FlashState } = {}): Promise<string[]> {
  const problems: string[] = [];
  const files = b.files();
  const text = (p: string) => (files.has(p) ? new TextDecoder().decode(files.get(p)) : null);

  // On the flash: no temporary file left; the backup and its sidecar agree; every log entry whole.
  for (const p of files.keys()) if (p.endsWith('.tmp')) problems.push(`temporary file left: ${p}`);
  const backupFile = files.get('/backup.json');
  const sidecar = text('/backup.etag');
  if (backupFile && sidecar?.trim() !== sha256Hex(backupFile)) problems.push(`sidecar ${show(sidecar)} disagrees with /backup.json (${sha256Hex(backupFile)})`);
  if (!backupFile && sidecar !== null) problems.push('a sidecar without a backup');
  for (const [p, bytes] of files) {
    if (!p.startsWith(`${EVENT_LOG_FOLDER}/`)) continue;
    try {
      const e = JSON.parse(new TextDecoder().decode(bytes));
      if (typeof e.time !== 'number' || typeof e.message !== 'string') throw new Error('fields');
    } catch {
      problems.push(`event log entry ${p} is not whole: ${show(new TextDecoder().decode(bytes))}`);
    }
  }
  // Every health report and the health state whole too (core/health/ring.ts).
  for (const [p, bytes] of files) {
    if (!p.startsWith(`${HEALTH_FOLDER}/`)) continue;
    try {
      const r = JSON.parse(new TextDecoder().decode(bytes));
      if (p === `${HEALTH_FOLDER}/state` ? typeof r.nextSeq !== 'number' : p !== `${HEALTH_FOLDER}/update` && typeof r.kind !== 'string') throw new Error('fields');
    } catch {
      problems.push(`health file ${p} is not whole: ${show(new TextDecoder().decode(bytes))}`);
    }
  }

  // Through the API: the board answers, and shows old or new of every item, never a mix.
  let auth: Record<string, string>;
  try {
    auth = await login(b);
  } catch (err) {
    return [...problems, `the board does not answer: ${(err as Error).message}`];
  }
  const status = await b.http('GET', API_PATHS.status, { headers: auth });
  if (status.status !== 200) problems.push(`GET /api/status answered ${status.status}`);

  let now: FlashState;
  try {
    now = await snapshot(b, auth);
  } catch (err) {
    return [...problems, `not readable: ${(err as Error).message}`];
  }
  const head = await b.http('HEAD', API_PATHS.backup, { headers: auth });
  if (now.backup !== null && head.headers.etag !== `"${sha256Hex(now.backup)}"`) problems.push(`GET /backup's ETag ${head.headers.etag} is not the SHA-256 of its body`);
  if (now.backup !== old.backup && now.backup !== neu.backup) problems.push(`backup is neither old (${show(old.backup)}) nor new (${show(neu.backup)}): ${show(now.backup)}`);
  const macs = new Set<string>();
  for (const kind of KINDS) {
    for (const uuid of new Set([...Object.keys(old.records[kind]), ...Object.keys(neu.records[kind]), ...Object.keys(now.records[kind])])) {
      const [was, will, is] = [old.records[kind][uuid], neu.records[kind][uuid], now.records[kind][uuid]];
      if (is !== was && is !== will) problems.push(`${kind}/${uuid} is neither old (${show(was)}) nor new (${show(will)}): ${show(is)}`);
    }
    for (const json of Object.values(now.records[kind])) {
      const mac = (JSON.parse(json) as Record<string, unknown>)[MAC_FIELD[kind]];
      if (typeof mac === 'string') macs.add(mac.toUpperCase());
    }
  }
  if (o.mustBe && !sameState(now, o.mustBe)) problems.push('the board says it is configured, but holds a partial copy');

  // The allowlist is exactly the listed records' MACs (nothing from a file that is not a record).
  const on = await b.http('PUT', API_PATHS.provisioning, { headers: auth });
  if (on.status !== 200) problems.push(`PUT /api/provisioning answered ${on.status}`);
  else if (on.json.allowlist_size !== macs.size) problems.push(`allowlist has ${on.json.allowlist_size} MACs, the records name ${macs.size}`);
  await b.http('DELETE', API_PATHS.provisioning, { headers: auth });
  return problems;
}

/**
 * Everything durable on a board's flash but what each boot adds of itself (the event log, the health
 * reports and state), as one comparable string (each file's path and SHA-256): for operations that
 * must happen all or not at all (factory-reset).
 */
export function durableState(files: Map<string, Uint8Array>): string {
  const out: Record<string, string> = {};
  for (const p of [...files.keys()].sort()) if (!p.startsWith(`${EVENT_LOG_FOLDER}/`) && !p.startsWith(`${HEALTH_FOLDER}/`)) out[p] = sha256Hex(files.get(p)!);
  return JSON.stringify(out);
}

/** The durable state is the old one or the new one as a whole; otherwise, which files make it a mix. */
export function wholeStateProblems(files: Map<string, Uint8Array>, old: string, neu: string): string[] {
  const now = durableState(files);
  if (now === old || now === neu) return [];
  const [o, n, c] = [old, neu, now].map((s) => JSON.parse(s) as Record<string, string>);
  const paths = [...new Set([...Object.keys(o!), ...Object.keys(n!), ...Object.keys(c!)])].sort();
  const notOld = paths.filter((p) => o![p] !== c![p]);
  const notNew = paths.filter((p) => n![p] !== c![p]);
  return [`half done: neither the old state (differs at ${notOld.join(', ')}) nor the new one (differs at ${notNew.join(', ')})`];
}

/** The whole flash of a board, for a report of a loss. */
export function describeFiles(files: Map<string, Uint8Array>): string {
  return [...files].map(([p, b]) => `${p} (${b.length} B)`).sort().join(', ');
}
