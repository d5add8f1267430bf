// Where the cloud is: /config/cloud.json {"url": "https://…"}. A device without it is not
// provisioned for the cloud (spec 7: 409).
import type { Storage } from '../../hal/storage.ts';
import { utf8Encode } from '../bytes.ts';
import { parseJson } from '../json-validator.ts';

const CLOUD_CONFIG_PATH = '/config/cloud.json';

export interface CloudConfig {
  url: string;
}

export function readCloudConfig(storage: Storage): CloudConfig | null {
  const size = storage.size(CLOUD_CONFIG_PATH);
  if (size === null || size > 4096) return null;
  try {
    const value = parseJson(storage.read(CLOUD_CONFIG_PATH, 0, size)) as { url?: unknown };
    return typeof value.url === 'string' && /^https?:\/\/[^\s/]+/.test(value.url) ? { url: value.url.replace(/\/+$/, '') } : null;
  } catch {
    return null;
  }
}

export function writeCloudConfig(storage: Storage, config: CloudConfig | null): void {
  if (config === null) {
    storage.remove(CLOUD_CONFIG_PATH);
    return;
  }
  const f = storage.create(`${CLOUD_CONFIG_PATH}.tmp`);
  f.write(utf8Encode(JSON.stringify(config)));
  f.close();
  storage.rename(`${CLOUD_CONFIG_PATH}.tmp`, CLOUD_CONFIG_PATH);
}
