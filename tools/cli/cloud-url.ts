// The cloud's base URL as a user gives it (--cloud, FLEET_CLOUD_URL, simulate --also): http or https,
// a host, and optionally a path prefix (a cloud behind a reverse proxy at http://host/fleet-api).
// A bare host:port is a usage error that says what to write, not an unreachable cloud.
import { InvalidArgumentError } from 'commander';

export function cloudUrlOption(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    const hint = /^[^/:]+:\d+(\/.*)?$/.test(value) || !value.includes('://') ? `; write it with its scheme: http://${value}` : '';
    throw new InvalidArgumentError(`The cloud URL must start with http:// or https://${hint}`);
  }
  if (url.username || url.password) throw new InvalidArgumentError('The cloud URL must not carry a user or password (give a token with --token or FLEET_TOKEN)');
  if (url.search || url.hash) throw new InvalidArgumentError('The cloud URL takes no query or fragment, only a path prefix such as http://host/fleet-api');
  return url.href.replace(/\/+$/, '');
}
