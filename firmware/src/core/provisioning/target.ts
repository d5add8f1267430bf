// The controller-provisioning target procedure (spec 3.6), step by step. What counts as a configured
// controller (step 1) is controllerConfiguration() below (docs/firmware-records.md).
import type { Hal } from '../../hal/index.ts';
import type { ClientResponse } from '../../hal/network.ts';
import type { EventLevel } from '../../hal/output.ts';
import { API_PATHS, recordPath, recordsPath } from '../api-paths.ts';
import type { LocalBackupStore } from '../backup/local-store.ts';
import { utf8Decode, utf8Encode } from '../bytes.ts';
import { writeFileAtomically } from '../flash.ts';
import { drain } from '../body.ts';
import { requestUnlessBusy } from '../http/busy-retry.ts';
import { readSmallBody } from '../http/respond.ts';
import { isUuid } from '../ids.ts';
import { JsonValidator, parseJson } from '../json-validator.ts';
import type { RecordKind, RecordStore } from '../records.ts';
import type { FirmwareSettings } from '../settings.ts';
import { PROVISIONING_SSID } from './mode.ts';
import { softApPassword } from './softap-password.ts';

export type TargetOutcome =
  | { kind: 'configured' }
  | { kind: 'no_ap' }
  | { kind: 'connect_failed'; reason: string }
  | { kind: 'token_refused'; status: number }
  | { kind: 'finished'; ok: boolean; lines: [string, string]; controllers: [number, number]; clients: [number, number]; backup: 'received' | 'absent' | 'bad' };

export interface TargetContext {
  hal: Hal;
  settings: FirmwareSettings;
  records: RecordStore;
  local: LocalBackupStore;
  log: (level: 'info' | 'warning' | 'error', message: string) => void;
}

const REQUEST_TIMEOUT_MS = 15_000;

/**
 * Written right after the cleanup of step 5 and removed when the procedure succeeds: while it exists
 * the records and backup on flash are an unfinished copy, not a configuration, so the next boot
 * provisions again. A configuration write through the API removes it (the admin took over).
 */
export const PROVISIONING_INCOMPLETE_PATH = '/config/provisioning-incomplete';

/**
 * Spec 3.6 step 1, "its own configuration": a controller is configured when it holds any
 * configuration (its own controller record, any controller or client record, or a local backup),
 * unless that is the unfinished copy of an interrupted provisioning. The admin password and the
 * cloud URL do not count: a factory set-up or a fleet enrollment gives them to a controller that is
 * still to be provisioned.
 */
export function controllerConfiguration(ctx: Pick<TargetContext, 'hal' | 'records' | 'local'>): { configured: boolean; why: string } {
  const { hal, records, local } = ctx;
  if (hal.storage.size(PROVISIONING_INCOMPLETE_PATH) !== null) return { configured: false, why: 'an earlier provisioning did not finish' };
  if (records.has('controllers', hal.system.identity().uuid)) return { configured: true, why: 'its own controller record' };
  const controllers = records.list('controllers').length;
  const clients = records.list('clients').length;
  if (controllers + clients > 0) return { configured: true, why: `${controllers} controller and ${clients} client records` };
  if (local.size() !== null) return { configured: true, why: 'a local backup' };
  return { configured: false, why: 'no records and no backup' };
}

/** The OLED's event log page: the newest entries that fit, each wrapped at word boundaries. */
export function eventLogPage(entries: { level: EventLevel; message: string }[], rows = 8, columns = 21): string[] {
  const lines: string[] = [];
  for (let i = entries.length - 1; i >= 0 && lines.length < rows; i--) {
    const e = entries[i]!;
    const wrapped = wrapWords(`${e.level[0]!.toUpperCase()} ${e.message}`, columns);
    // The entry that does not fit whole keeps its first lines, so its start stays readable.
    lines.unshift(...wrapped.slice(0, rows - lines.length));
  }
  return lines;
}

/** Breaks a text into lines of at most `columns` characters at spaces; a longer word is split. */
export function wrapWords(text: string, columns: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (let word of text.split(/\s+/).filter((w) => w !== '')) {
    while (word.length > columns) {
      if (line !== '') lines.push(line);
      line = '';
      lines.push(word.slice(0, columns));
      word = word.slice(columns);
    }
    if (line === '') line = word;
    else if (line.length + 1 + word.length <= columns) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

export async function runTargetProcedure(ctx: TargetContext): Promise<TargetOutcome> {
  const { hal, settings, records, log } = ctx;
  const me = hal.system.identity();
  if (!me.ethernetMac) throw new Error('the target procedure needs a controller with an Ethernet MAC');
  // Step 1: a configured controller boots normally.
  const state = controllerConfiguration(ctx);
  if (state.configured) return { kind: 'configured' };
  log('info', `not configured (${state.why}): looking for a provisioning source`);
  const ap = (await hal.radio.scan()).filter((a) => a.ssid === PROVISIONING_SSID).sort((a, b) => b.rssiDbm - a.rssiDbm)[0];
  if (!ap) {
    log('info', 'no provisioning AP in range: booting unconfigured, retry at next reboot');
    return { kind: 'no_ap' };
  }
  // Step 2: password from the BSSID; station MAC := Ethernet MAC (until reboot); 10 s to connect.
  hal.radio.setStationMac(me.ethernetMac);
  hal.radio.setTxPowerDbm(settings.minimumTxPowerDbm);
  let gateway: string;
  try {
    gateway = (await hal.radio.connect({ ssid: ap.ssid, password: softApPassword(ap.bssid), bssid: ap.bssid, timeoutMs: settings.targetConnectTimeoutMs })).gatewayUrl;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    log('warning', `cannot join ${ap.ssid} (${ap.bssid}): ${reason}; continuing unprovisioned`);
    return { kind: 'connect_failed', reason };
  }
  try {
    return await provisionFrom(ctx, gateway, me.uuid, me.ethernetMac);
  } catch (err) {
    // The source went away before a token was issued (e.g. it shut its SoftAP down, spec 3.6 step 3).
    const reason = err instanceof Error ? err.message : String(err);
    log('warning', `provisioning source unreachable: ${reason}; continuing unprovisioned`);
    return { kind: 'connect_failed', reason };
  } finally {
    await hal.radio.disconnect().catch(() => undefined);
  }
}

async function provisionFrom(ctx: TargetContext, gateway: string, uuid: string, mac: string): Promise<TargetOutcome> {
  const { hal, settings, records, local, log } = ctx;
  // A busy source (503 board_busy) is asked again after its Retry-After (core/http/busy-retry.ts).
  const request = (method: string, path: string, headers: Record<string, string>, body?: Uint8Array): Promise<ClientResponse> =>
    requestUnlessBusy(hal, { method, url: gateway + path, headers, ...(body ? { body, bodyLength: body.length } : {}), timeoutMs: REQUEST_TIMEOUT_MS });

  // Step 4: the token exchange. Step 3's refusal (MAC not allowed) already failed the association.
  const exchange = await request('POST', API_PATHS.provisioningToken, { 'content-type': 'application/json' }, utf8Encode(JSON.stringify({ uuid, mac })));
  if (exchange.status !== 200) {
    await drain(exchange.body);
    log('warning', `provisioning token refused (${exchange.status}): continuing unprovisioned`);
    return { kind: 'token_refused', status: exchange.status };
  }
  const token = (parseJson(await readSmallBody(exchange.body, 1024)) as { token?: unknown }).token;
  if (typeof token !== 'string') return { kind: 'token_refused', status: exchange.status };
  const auth = { 'provisioning-token': token };

  // Step 5: cleanup only after a valid token. From here until success the flash holds an unfinished copy.
  writeFileAtomically(hal.storage, PROVISIONING_INCOMPLETE_PATH, utf8Encode(uuid));
  const removed = records.clear();
  local.remove();
  log('info', `provisioning: token received, removed ${removed} records and the local backup`);

  // Step 6: lists and records in order, each written as it arrives (one record in memory).
  const copy = async (kind: RecordKind): Promise<[number, number]> => {
    // What is held while the records are fetched: the list's length and its UUIDs as one string
    // (UUIDs never contain a line feed), not the parsed list (docs/firmware-bench.md, "Slots").
    let listed: number;
    let ids: string;
    try {
      const res = await request('GET', recordsPath(kind), auth);
      if (res.status !== 200) {
        await drain(res.body);
        return [0, -1];
      }
      const list = parseJson(await readSmallBody(res.body, 64 * 1024));
      listed = Array.isArray(list) ? list.length : -1;
      ids = Array.isArray(list) ? list.filter(isUuid).join('\n') : '';
    } catch (err) {
      log('error', `list of ${kind} not received: ${err instanceof Error ? err.message : String(err)}`);
      return [0, -1];
    }
    let written = 0;
    for (let at = 0; at < ids.length; ) {
      let end = ids.indexOf('\n', at);
      if (end < 0) end = ids.length;
      const id = ids.slice(at, end);
      at = end + 1;
      try {
        const r = await request('GET', recordPath(kind, id), auth);
        if (r.status !== 200) {
          await drain(r.body);
          log('warning', `record ${kind}/${id} not received (${r.status})`);
          continue;
        }
        const text = utf8Decode(await readSmallBody(r.body, settings.maxRecordBytes));
        parseJson(text);
        records.put(kind, id, text);
        written++;
      } catch (err) {
        log('warning', `record ${kind}/${id} not written: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return [written, listed];
  };
  const controllers = await copy('controllers');
  const clients = await copy('clients');
  const backup = await copyBackup(ctx, request, auth);

  // Step 7: compare counts, show and log the outcome (the table of spec 3.6, character for character).
  let lines: [string, string];
  let ok = false;
  if (controllers[0] !== controllers[1]) lines = [`Prov fail C ${controllers[0]}/${controllers[1]}`, ''];
  else if (clients[0] !== clients[1]) lines = [`Prov fail L ${clients[0]}/${clients[1]}`, ''];
  else {
    const head = `Prov OK ${controllers[0]}C ${clients[0]}L`;
    if (backup === 'bad') lines = [head, 'Prov bad backup'];
    else {
      ok = true;
      lines = [head, backup === 'received' ? 'Prov OK got backup' : 'Prov OK no backup'];
    }
  }
  hal.display.show(lines[1] === '' ? [lines[0]] : lines);
  log(ok ? 'info' : 'error', lines[1] === '' ? lines[0] : `${lines[0]} / ${lines[1]}`);
  // Step 8: reboot into normal mode after 5 s only on success; otherwise stay on the event log page.
  if (ok) {
    hal.storage.remove(PROVISIONING_INCOMPLETE_PATH);
    hal.timers.setTimeout(() => hal.system.reboot('provisioned'), settings.resultDisplayMs);
  } else hal.display.show(eventLogPage(hal.eventLog.recent(8)));
  return { kind: 'finished', ok, lines, controllers, clients, backup };
}

/** GET /backup, streamed to flash and checked as JSON on the way; 404 is non-fatal (spec 3.6 step 6). */
async function copyBackup(
  ctx: TargetContext,
  request: (method: string, path: string, headers: Record<string, string>) => Promise<ClientResponse>,
  auth: Record<string, string>,
): Promise<'received' | 'absent' | 'bad'> {
  let res: ClientResponse;
  try {
    res = await request('GET', API_PATHS.backup, auth);
  } catch {
    return 'bad';
  }
  if (res.status === 404) {
    await drain(res.body);
    return 'absent';
  }
  if (res.status !== 200) {
    await drain(res.body);
    return 'bad';
  }
  let writer: ReturnType<LocalBackupStore['begin']>;
  try {
    writer = ctx.local.begin();
  } catch (err) {
    await drain(res.body).catch(() => undefined);
    ctx.log('error', `backup not written: ${err instanceof Error ? err.message : String(err)}`);
    return 'bad';
  }
  const json = new JsonValidator();
  try {
    for (;;) {
      const chunk = await res.body.read();
      if (chunk === null) break;
      json.update(chunk);
      writer.write(chunk);
    }
    json.finish();
  } catch (err) {
    writer.abort();
    await drain(res.body).catch(() => undefined);
    ctx.log('error', `backup not written: ${err instanceof Error ? err.message : String(err)}`);
    return 'bad';
  }
  // A failed commit (flash full, a rename refused) is a backup write failure: "Prov bad backup",
  // logged, and no half-installed backup left behind.
  try {
    writer.commit();
  } catch (err) {
    ctx.log('error', `backup not written: ${err instanceof Error ? err.message : String(err)}`);
    try {
      ctx.local.remove();
    } catch {
      /* the next boot's recovery repairs what is left */
    }
    return 'bad';
  }
  return 'received';
}
