// The console's places (hash routes, docs/operator-console.md), written once: what a hash names, and the
// hash of a device's page and a release's page for the links that lead there. Every segment is
// URI-encoded, so a UUID or version holding `/` or `#` can never name another place.

export interface TrackId {
  class: string;
  product_hex: string;
  application: string;
}

export type Place =
  | { page: 'releases' | 'devices' | 'health' | 'appconfig' | 'audit' }
  | { page: 'device'; uuid: string }
  | { page: 'release'; track: TrackId; version: string };

const encode = (...segments: string[]) => '#/' + segments.map(encodeURIComponent).join('/');

export const deviceHref = (uuid: string) => encode('devices', uuid);
export const releaseHref = (t: TrackId, version: string) => encode('releases', t.class, t.product_hex, t.application, version);

/** The place a hash names; the releases page for anything else. */
export function placeOf(hash: string): Place {
  let parts: string[];
  try {
    parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  } catch {
    return { page: 'releases' };
  }
  const [first, ...rest] = parts;
  if (first === 'devices' && rest.length === 1 && rest[0]) return { page: 'device', uuid: rest[0] };
  if (first === 'releases' && rest.length === 4 && rest.every(Boolean)) {
    const [cls, product_hex, application, version] = rest as [string, string, string, string];
    return { page: 'release', track: { class: cls, product_hex, application }, version };
  }
  if (rest.length === 0 && (first === 'releases' || first === 'devices' || first === 'health' || first === 'appconfig' || first === 'audit')) return { page: first };
  return { page: 'releases' };
}
