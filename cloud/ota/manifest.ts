// The firmware manifest: the JSON a device receives (DESIGN.md section 4).
import type { FirmwareRelease } from '../store/types.ts';

export interface Manifest {
  class: string;
  product_hex: string;
  application: string;
  version: string;
  status: 'RELEASED' | 'REVOKED';
  released_at: string;
  revoked_at?: string;
  url?: string;
  size?: number;
  sha256?: string;
}

export function toManifest(r: FirmwareRelease): Manifest {
  const m: Manifest = {
    class: r.class,
    product_hex: r.productHex,
    application: r.application,
    version: r.version,
    status: r.status,
    released_at: r.releasedAt,
  };
  if (r.revokedAt !== undefined) m.revoked_at = r.revokedAt;
  if (r.url !== undefined) m.url = r.url;
  if (r.size !== undefined) m.size = r.size;
  if (r.sha256 !== undefined) m.sha256 = r.sha256;
  return m;
}
