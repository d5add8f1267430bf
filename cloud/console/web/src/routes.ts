// The console's places (hash routes, docs/operator-console.md), written once: what a hash names, and the
// hash of a device's page, a release's page and the devices page filtered, for the links that lead
// there. Every segment is URI-encoded, so a UUID or version holding `/` or `#` can never name another
// place; the devices page's filters are a query after `?`, as the inventory's API names them.

export interface TrackId {
  class: string;
  product_hex: string;
  application: string;
}

/** What the devices page is opened filtered by (the inventory's query parameters). */
export interface DeviceFilter {
  class?: string;
  product_hex?: string;
  application?: string;
  version?: string;
}
const DEVICE_FILTER_KEYS = ['class', 'product_hex', 'application', 'version'] as const;

export type Place =
  | { page: 'releases' | 'health' | 'appconfig' | 'audit' }
  | { page: 'devices'; filter: DeviceFilter }
  | { page: 'device'; uuid: string }
  | { page: 'release'; track: TrackId; version: string };

const encode = (...segments: string[]) => '#/' + segments.map(encodeURIComponent).join('/');

export const deviceHref = (uuid: string) => encode('devices', uuid);
export const releaseHref = (t: TrackId, version: string) => encode('releases', t.class, t.product_hex, t.application, version);
/** The devices page showing the devices that reported `version` on track `t` at their last check. */
export const devicesHref = (f: DeviceFilter) => {
  const q = new URLSearchParams();
  for (const k of DEVICE_FILTER_KEYS) if (f[k]) q.set(k, f[k]);
  return q.size ? `${encode('devices')}?${q}` : encode('devices');
};

function filterOf(query: string): DeviceFilter {
  const q = new URLSearchParams(query);
  const f: DeviceFilter = {};
  for (const k of DEVICE_FILTER_KEYS) {
    const v = q.get(k);
    if (v) f[k] = v;
  }
  return f;
}

/** The place a hash names; the releases page for anything else. */
export function placeOf(hash: string): Place {
  const [path = '', query = ''] = hash.replace(/^#\/?/, '').split('?', 2);
  let parts: string[];
  try {
    parts = path.split('/').map(decodeURIComponent);
  } catch {
    return { page: 'releases' };
  }
  const [first, ...rest] = parts;
  if (first === 'devices' && rest.length === 1 && rest[0]) return { page: 'device', uuid: rest[0] };
  if (first === 'releases' && rest.length === 4 && rest.every(Boolean)) {
    const [cls, product_hex, application, version] = rest as [string, string, string, string];
    return { page: 'release', track: { class: cls, product_hex, application }, version };
  }
  if (first === 'devices' && rest.length === 0) return { page: 'devices', filter: filterOf(query) };
  if (rest.length === 0 && (first === 'releases' || first === 'health' || first === 'appconfig' || first === 'audit')) return { page: first };
  return { page: 'releases' };
}
