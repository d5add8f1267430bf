// The client provisioning procedure (spec 3.5) and the client's normal mode: Wi-Fi, then MQTT, using
// only the configuration received. What a valid client configuration is (spec 2.6, 3.5 step 1):
// ../client-configuration.ts, docs/firmware-records.md.
import type { Hal } from '../../hal/index.ts';
import { utf8Decode, utf8Encode } from '../bytes.ts';
import { clientConfigurationProblem, storedClientConfiguration } from '../client-configuration.ts';
import { drain } from '../body.ts';
import { requestUnlessBusy } from '../http/busy-retry.ts';
import { readSmallBody } from '../http/respond.ts';
import type { RecordStore } from '../records.ts';
import type { FirmwareSettings } from '../settings.ts';
import { parseJson } from '../json-validator.ts';
import { rebootSoon } from '../reboot.ts';
import { clientStatusTopic, type ClientMqtt, type ClientStatusMessage } from './client-mqtt.ts';
import { PROVISIONING_SSID } from './mode.ts';
import { softApPassword } from './softap-password.ts';

export type ClientAttempt = 'configured' | 'no_ap' | 'connect_failed' | 'unknown_uuid' | 'refused' | 'invalid_configuration' | 'provisioned';

export interface ClientContext {
  hal: Hal;
  settings: FirmwareSettings;
  records: RecordStore;
  log: (level: 'info' | 'warning' | 'error', message: string) => void;
  /** Where the MQTT session's state is kept for `status` (client-mqtt.ts). */
  mqtt?: ClientMqtt;
}

/** One scan cycle of spec 3.5 steps 3 to 6. The caller schedules the next cycle on anything but success. */
export async function clientProvisioningAttempt(ctx: ClientContext): Promise<ClientAttempt> {
  const { hal, settings, records, log } = ctx;
  const me = hal.system.identity();
  // Spec 3.5 step 1: only a *valid* configuration counts; anything else means provisioning again.
  if (storedClientConfiguration(ctx).config) return 'configured';
  const ap = (await hal.radio.scan()).filter((a) => a.ssid === PROVISIONING_SSID).sort((a, b) => b.rssiDbm - a.rssiDbm)[0];
  if (!ap) return 'no_ap';
  hal.radio.setTxPowerDbm(settings.minimumTxPowerDbm);
  let gateway: string;
  try {
    gateway = (await hal.radio.connect({ ssid: ap.ssid, password: softApPassword(ap.bssid), bssid: ap.bssid, timeoutMs: settings.targetConnectTimeoutMs })).gatewayUrl;
  } catch (err) {
    log('warning', `cannot join ${ap.ssid}: ${err instanceof Error ? err.message : String(err)}`);
    return 'connect_failed';
  }
  try {
    const body = utf8Encode(JSON.stringify({ uuid: me.uuid, mac: me.wifiMac }));
    const ex = await requestUnlessBusy(hal, { method: 'POST', url: `${gateway}/api/provisioning/token`, headers: { 'content-type': 'application/json' }, body, bodyLength: body.length, timeoutMs: 15_000 });
    if (ex.status === 404) {
      await drain(ex.body);
      log('info', 'provisioning: UUID not known yet, retrying at the next scan cycle');
      return 'unknown_uuid';
    }
    if (ex.status !== 200) {
      await drain(ex.body);
      return 'refused';
    }
    const token = (parseJson(await readSmallBody(ex.body, 1024)) as { token?: unknown }).token;
    if (typeof token !== 'string') return 'refused';
    const res = await requestUnlessBusy(hal, { method: 'GET', url: `${gateway}/api/clients/${encodeURIComponent(me.uuid)}`, headers: { 'provisioning-token': token }, timeoutMs: 15_000 });
    if (res.status !== 200) {
      await drain(res.body);
      return 'refused';
    }
    const text = utf8Decode(await readSmallBody(res.body, settings.maxRecordBytes));
    const problem = clientConfigurationProblem(parseJson(text));
    if (problem) {
      log('warning', `provisioning: the configuration received is not usable (${problem.field} ${problem.reason}); retrying at the next scan cycle`);
      return 'invalid_configuration';
    }
    records.put('clients', me.uuid, text);
    log('info', 'provisioning: configuration received, rebooting into normal mode');
    rebootSoon(hal, 'provisioned');
    return 'provisioned';
  } catch (err) {
    log('warning', `provisioning attempt failed: ${err instanceof Error ? err.message : String(err)}`);
    return 'connect_failed';
  } finally {
    await hal.radio.disconnect().catch(() => undefined);
  }
}

/** Spec 3.5 step 6: Wi-Fi, then MQTT, then normal operation. */
export async function startClientNormalMode(ctx: ClientContext): Promise<'mqtt_connected' | 'no_configuration' | 'wifi_failed' | 'mqtt_failed'> {
  const { hal, log } = ctx;
  const me = hal.system.identity();
  const config = storedClientConfiguration(ctx).config;
  if (!config) return 'no_configuration';
  try {
    await hal.radio.connect({ ssid: config.wifi.ssid, password: config.wifi.password, timeoutMs: 15_000 });
  } catch (err) {
    log('error', `Wi-Fi ${config.wifi.ssid}: ${err instanceof Error ? err.message : String(err)}`);
    return 'wifi_failed';
  }
  const broker = `${config.mqtt.host}:${config.mqtt.port}`;
  const topic = clientStatusTopic(me.uuid);
  const message = (m: ClientStatusMessage) => utf8Encode(JSON.stringify(m));
  try {
    const session = await hal.mqtt.connect({
      host: config.mqtt.host,
      port: config.mqtt.port,
      clientId: config.mqtt.client_id ?? me.uuid,
      ...(config.mqtt.username ? { username: config.mqtt.username } : {}),
      ...(config.mqtt.password ? { password: config.mqtt.password } : {}),
      ...(config.mqtt.tls === false ? {} : { ca: config.ca_certificate }),
      will: { topic, payload: message({ state: 'offline' }) },
    });
    // Retained: whoever subscribes later (the configurator) still reads that this client came online.
    await session.publish(topic, message({ state: 'online', version: me.firmwareVersion }), { retain: true });
    ctx.mqtt?.connected(broker);
    log('info', `MQTT connected to ${broker}`);
    return 'mqtt_connected';
  } catch (err) {
    const problem = err instanceof Error ? err.message : String(err);
    ctx.mqtt?.failed(broker, problem);
    log('error', `MQTT ${broker}: ${problem}`);
    return 'mqtt_failed';
  }
}
