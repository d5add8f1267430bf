// The controller-provisioning target procedure (spec 3.6), step by step.
import type { Hal } from '../../hal/index.ts';
import type { ClientResponse } from '../../hal/network.ts';
import type { LocalBackupStore } from '../backup/local-store.ts';
import { utf8Decode, utf8Encode } from '../bytes.ts';
import { softApPassword } from '../crypto/device-keys.ts';
import { drain, readSmallBody } from '../http/respond.ts';
import { isUuid } from '../ids.ts';
import { JsonValidator } from '../json-validator.ts';
import { PROVISIONING_SSID } from '../provisioning/mode.ts';
import type { RecordKind, RecordStore } from '../records.ts';
import type { FirmwareSettings } from '../settings.ts';

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

export async function runTargetProcedure(ctx: TargetContext): Promise<TargetOutcome> {
  const { hal, settings, records, log } = ctx;
  const me = hal.system.identity();
  if (!me.ethernetMac) throw new Error('the target procedure needs a controller with an Ethernet MAC');
  // Step 1: a configured controller boots normally.
  if (records.has('controllers', me.uuid)) return { kind: 'configured' };
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
  const request = (method: string, path: string, headers: Record<string, string>, body?: Uint8Array): Promise<ClientResponse> =>
    hal.network.request({ method, url: gateway + path, headers, ...(body ? { body, bodyLength: body.length } : {}), timeoutMs: REQUEST_TIMEOUT_MS });

  // Step 4: the token exchange. Step 3's refusal (MAC not allowed) already failed the association.
  const exchange = await request('POST', '/api/provisioning/token', { 'content-type': 'application/json' }, utf8Encode(JSON.stringify({ uuid, mac })));
  if (exchange.status !== 200) {
    await drain(exchange.body);
    log('warning', `provisioning token refused (${exchange.status}): continuing unprovisioned`);
    return { kind: 'token_refused', status: exchange.status };
  }
  const token = (JSON.parse(utf8Decode(await readSmallBody(exchange.body, 1024))) as { token?: unknown }).token;
  if (typeof token !== 'string') return { kind: 'token_refused', status: exchange.status };
  const auth = { 'provisioning-token': token };

  // Step 5: cleanup only after a valid token.
  const removed = records.clear();
  local.remove();
  log('info', `provisioning: token received, removed ${removed} records and the local backup`);

  // Step 6: lists and records in order, each written as it arrives (one record in memory).
  const copy = async (kind: RecordKind): Promise<[number, number]> => {
    let list: unknown;
    try {
      const res = await request('GET', `/api/${kind}`, auth);
      if (res.status !== 200) {
        await drain(res.body);
        return [0, -1];
      }
      list = JSON.parse(utf8Decode(await readSmallBody(res.body, 64 * 1024)));
    } catch (err) {
      log('error', `list of ${kind} not received: ${err instanceof Error ? err.message : String(err)}`);
      return [0, -1];
    }
    const uuids = Array.isArray(list) ? list.filter(isUuid) : [];
    let written = 0;
    for (const id of uuids) {
      try {
        const r = await request('GET', `/api/${kind}/${encodeURIComponent(id)}`, auth);
        if (r.status !== 200) {
          await drain(r.body);
          continue;
        }
        const text = utf8Decode(await readSmallBody(r.body, settings.maxRecordBytes));
        JSON.parse(text);
        records.put(kind, id, text);
        written++;
      } catch (err) {
        log('warning', `record ${kind}/${id} not written: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return [written, Array.isArray(list) ? list.length : -1];
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
  if (ok) hal.timers.setTimeout(() => hal.system.reboot('provisioned'), settings.resultDisplayMs);
  else hal.display.show(hal.eventLog.recent(8).map((e) => `${e.level[0]!.toUpperCase()} ${e.message}`.slice(0, 21)));
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
    res = await request('GET', '/backup', auth);
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
  const writer = ctx.local.begin();
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
  writer.commit();
  return 'received';
}
