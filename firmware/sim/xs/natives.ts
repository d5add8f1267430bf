// The platform's native functions (firmware/src/platform/moddable/native/*.c, declared in
// native/native.d.ts), emulated: XS's `native(name)` answers these by name. Each does what its C
// does, with the host as the hardware: the eFuse HMAC with a key that stays in the host process, the
// PSA crypto of the accelerators (the host's crypto), the Wi-Fi driver (the virtual air), esp_ota_ops
// on the flash image, esp_read_mac and esp_restart.
import { concatBytes } from '../../src/core/bytes.ts';
import { arrayBufferOf, bytesOf, hostCall } from './host.ts';

type Bytes = ArrayBuffer | ArrayBufferView;
/** A PSA operation held by the host; XS holds its handle (fw_crypto_*.c: a host object). */
interface PsaOperation {
  readonly handle: number;
}

const slot = (value: { partition: string; version: string; projectName: string; state: string } | null) =>
  value ? ([value.partition, value.version, value.projectName, value.state] as [string, string, string, string]) : undefined;

export const NATIVES: Record<string, (...args: any[]) => unknown> = {
  xs_fw_fuse_hmac: (message: Bytes) => arrayBufferOf(hostCall('fuse.hmac', {}, bytesOf(message)).payload),

  xs_fw_wifi_set_tx_power: (quarterDbm: number) => hostCall('wifi.txpower', { quarterDbm }).value as boolean,
  xs_fw_wifi_set_station_mac: (mac: Bytes) => void hostCall('wifi.station.mac', {}, bytesOf(mac)),
  xs_fw_wifi_softap_wpa2_only: () => void hostCall('wifi.ap.wpa2'),
  xs_fw_wifi_station_gateway: () => (hostCall('wifi.gateway').value as string | null) ?? undefined,
  xs_fw_wifi_stations: () => arrayBufferOf(hostCall('wifi.stations').payload),
  xs_fw_wifi_station_for_address: (address: string) => {
    const r = hostCall('wifi.station.for', { address });
    return r.value ? arrayBufferOf(r.payload) : undefined;
  },
  xs_fw_wifi_deauth_station: (mac: Bytes) => hostCall('wifi.deauth', {}, bytesOf(mac)).value as boolean,

  xs_fw_sha256_create: (): PsaOperation => ({ handle: hostCall('psa.sha256.create').value as number }),
  xs_fw_sha256_update: (op: PsaOperation, data: Bytes) => void hostCall('psa.update', { handle: op.handle }, bytesOf(data)),
  xs_fw_sha256_finish: (op: PsaOperation) => arrayBufferOf(hostCall('psa.sha256.finish', { handle: op.handle }).payload),
  xs_fw_hmac_sha256: (key: Bytes, message: Bytes) => {
    const k = bytesOf(key);
    return arrayBufferOf(hostCall('psa.hmac', { keyLength: k.length }, concatBytes(k, bytesOf(message))).payload);
  },
  xs_fw_gcm_create: (key: Bytes, iv: Bytes, aad: Bytes, encrypt: boolean): PsaOperation => {
    const k = bytesOf(key);
    const n = bytesOf(iv);
    return { handle: hostCall('psa.gcm.create', { keyLength: k.length, ivLength: n.length, encrypt }, concatBytes(k, n, bytesOf(aad))).value as number };
  },
  xs_fw_gcm_update: (op: PsaOperation, input: Bytes) => arrayBufferOf(hostCall('psa.update', { handle: op.handle }, bytesOf(input)).payload),
  xs_fw_gcm_finish: (op: PsaOperation) => arrayBufferOf(hostCall('psa.gcm.finish', { handle: op.handle }).payload),
  xs_fw_gcm_verify: (op: PsaOperation, tag: Bytes) => hostCall('psa.gcm.verify', { handle: op.handle }, bytesOf(tag)).value as boolean,
  xs_fw_p256_sign: (privateKey: Bytes, message: Bytes) => {
    const k = bytesOf(privateKey);
    return arrayBufferOf(hostCall('psa.p256.sign', { keyLength: k.length }, concatBytes(k, bytesOf(message))).payload);
  },
  xs_fw_p256_public_key: (privateKey: Bytes) => arrayBufferOf(hostCall('psa.p256.public', {}, bytesOf(privateKey)).payload),
  xs_fw_random: (length: number) => arrayBufferOf(hostCall('psa.random', { length }).payload),

  xs_fw_restart: () => void hostCall('system.restart'),
  xs_fw_mac_address: (kind: string) => arrayBufferOf(hostCall('mac.read', { kind }).payload),

  xs_fw_ota_running_app: () => slot(hostCall('ota.running').value)!,
  xs_fw_ota_last_invalid_app: () => slot(hostCall('ota.lastInvalid').value),
  xs_fw_ota_mark_valid: () => hostCall('ota.markValid').value as boolean,
};

/** XS's `native(name)`: the named host function, or a throw when the build has none. */
export function native(name: string): (...args: any[]) => unknown {
  const fn = NATIVES[name];
  if (!fn) throw new Error(`native function ${name} not found`);
  return fn;
}
