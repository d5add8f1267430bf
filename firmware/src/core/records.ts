// Controller and client records (spec 2.6), one file each, encrypted at rest with the storage key
// (FFCE framing; DESIGN.md section 3, docs/firmware-records.md). Only one record is in memory at a
// time. Client records carry the client's `mac`; controller records the target's `ethernet_mac`:
// they feed the provisioning allowlist (DESIGN.md section 5).
import type { CryptoHal } from '../hal/crypto.ts';
import type { Storage } from '../hal/storage.ts';
import { utf8Decode, utf8Encode } from './bytes.ts';
import { decryptFfce, encryptFfce } from './crypto/ffce.ts';
import { writeFileAtomically } from './flash.ts';
import { isUuid, normalizeMac } from './ids.ts';
import { parseJson } from './json-validator.ts';

export type RecordKind = 'controllers' | 'clients';
export const RECORD_KINDS: readonly RecordKind[] = Object.freeze(['controllers', 'clients']);

/** The MAC field each kind of record carries. */
export const MAC_FIELD: Readonly<{ controllers: 'ethernet_mac'; clients: 'mac' }> = Object.freeze({ controllers: 'ethernet_mac', clients: 'mac' });

export class RecordStore {
  constructor(
    private readonly storage: Storage,
    private readonly crypto: CryptoHal,
    private readonly key: Uint8Array,
  ) {}

  private path(kind: RecordKind, uuid: string): string {
    return `/records/${kind}/${uuid}`;
  }

  /** The UUIDs of the stored records. Only UUID names count: a temporary file never has one. */
  list(kind: RecordKind): string[] {
    const prefix = `/records/${kind}/`;
    return this.storage
      .list(`/records/${kind}`)
      .map((p) => p.slice(prefix.length))
      .filter((name) => isUuid(name));
  }

  has(kind: RecordKind, uuid: string): boolean {
    return isUuid(uuid) && this.storage.size(this.path(kind, uuid)) !== null;
  }

  /** The record's JSON text, decrypted; null when absent or unreadable. */
  getText(kind: RecordKind, uuid: string): string | null {
    if (!this.has(kind, uuid)) return null;
    const path = this.path(kind, uuid);
    const blob = this.storage.read(path, 0, this.storage.size(path) ?? 0);
    try {
      return utf8Decode(decryptFfce(this.crypto, this.key, blob));
    } catch {
      return null;
    }
  }

  /** The record as an object; null when absent, unreadable, or not a JSON object (it then feeds nothing). */
  get(kind: RecordKind, uuid: string): Record<string, unknown> | null {
    const text = this.getText(kind, uuid);
    if (text === null) return null;
    let value: unknown;
    try {
      value = parseJson(text);
    } catch {
      return null;
    }
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  }

  /** Encrypts and writes one record (atomic replace). */
  put(kind: RecordKind, uuid: string, json: string): void {
    if (!isUuid(uuid)) throw new Error(`not a record UUID: ${uuid}`);
    writeFileAtomically(this.storage, this.path(kind, uuid), encryptFfce(this.crypto, this.key, utf8Encode(json)));
  }

  remove(kind: RecordKind, uuid: string): boolean {
    return isUuid(uuid) && this.storage.remove(this.path(kind, uuid));
  }

  /** Removes every record of both kinds; returns how many. */
  clear(): number {
    let n = 0;
    for (const kind of RECORD_KINDS) for (const uuid of this.list(kind)) if (this.remove(kind, uuid)) n++;
    return n;
  }

  /** The MAC a record is bound to, normalized, or null. */
  macOf(kind: RecordKind, uuid: string): string | null {
    return normalizeMac(this.get(kind, uuid)?.[MAC_FIELD[kind]]);
  }

  /** Every registered client MAC and controller Ethernet MAC: the provisioning allowlist. */
  allowlist(): Set<string> {
    const macs = new Set<string>();
    for (const kind of RECORD_KINDS) {
      for (const uuid of this.list(kind)) {
        const mac = this.macOf(kind, uuid);
        if (mac) macs.add(mac);
      }
    }
    return macs;
  }
}
