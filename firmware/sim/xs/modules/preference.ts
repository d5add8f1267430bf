// `preference` (modules/files/preference, documentation/files/preference.md): NVS key/values by
// domain. Keys and domains are at most 15 bytes (NVS_KEY_NAME_MAX_SIZE - 1); get of a missing key
// answers undefined. The host keeps the values (the board's NVS partition, for the engine's life).
import { hostCall } from '../host.ts';

function check(domain: string, key: string): void {
  if (domain.length > 15 || key.length > 15) throw new Error('preference: domain and key are at most 15 bytes');
}

const Preference = {
  get(domain: string, key: string): unknown {
    check(domain, key);
    return hostCall('nvs.get', { domain, key }).value ?? undefined;
  },
  set(domain: string, key: string, value: boolean | number | string | ArrayBuffer): void {
    check(domain, key);
    if (value instanceof ArrayBuffer) throw new Error('preference: buffers are not emulated');
    hostCall('nvs.set', { domain, key, value });
  },
  delete(domain: string, key: string): void {
    check(domain, key);
    hostCall('nvs.delete', { domain, key });
  },
  keys(domain: string): string[] {
    return hostCall('nvs.keys', { domain }).value as string[];
  },
};

export default Preference;
