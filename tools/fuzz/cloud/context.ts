// What the cloud fuzz's generators share: the devices it signs for, the tokens it sends, the tracks it
// writes to (and the canary's, which it never changes), and the junk it puts where values go.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { Rng } from '../rng.ts';

export interface Device {
  uuid: string;
  privateKey: KeyObject;
  publicKeyPem: string;
}

export interface GenContext {
  rng: Rng;
  adminToken: string;
  nonSuperToken: string;
  devices: Device[];
  canary: Device;
  keys: Record<'p256' | 'pkcs8' | 'sec1' | 'p384' | 'rsa' | 'ed25519', string>;
  usedNonces: Buffer[];
}

/** One request as a target builds it, before the generic mutations and the framing. */
export interface Built {
  method: string;
  path: string;
  headers: [string, string][];
  body?: Buffer;
  label: string;
  /** A read of the canary with a valid token, whose method must not be mutated into a write. */
  fixedMethod?: boolean;
}

/** The canary's release: stored before the run, read after it, never written with a valid token. */
export const CANARY_TRACK = { cls: 'canary', productHex: '0x0000CA4A', application: 'canary', version: '2026.01.01' };
/** The track the fuzz releases, revokes and rolls out on. */
export const FUZZ_TRACK = { cls: 'fz', productHex: '0x0000F022', application: 'fz' };

export const JUNK_SEGMENTS = [
  '', '%00', '%ff', '%E0%A4%A', '%zz', '..', '%2e%2e', '%2F', 'a'.repeat(65), 'x'.repeat(300), '%C3%A9', '\u00e9', '*', ' ', '%20',
  '0x', '0xGGGGGGGG', '0X0A0B0C0D', 'null', '-1', '%u0041', '\u00ff\u00fe', 'a;b', 'a,b', '~', '%0d%0a',
];
export const JUNK_VERSIONS = ['', '2026.1.01', '2026-01-01', 'latest', '2026.01.01.1', '9999.99.99', '0000.00.00', '2026.13.01', '%00', 'a'.repeat(40), '２０２６.01.01'];
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'SEARCH', 'PURGE', 'LINK'];

export function pathOf(...segments: string[]): string {
  return '/' + segments.join('/');
}

export function enc(s: string): string {
  // Keep junk segments as given (they are meant raw); encode only what would break the request line.
  return s.replace(/[ \r\n]/g, (c) => encodeURIComponent(c));
}

/**
 * A version for the fuzz track: a real-looking one mostly, junk now and then. Few enough (48) that
 * the routes of one release (its image, revoke, rollout) often find one the fuzz released before.
 */
export function fuzzVersion(ctx: GenContext): string {
  const { rng } = ctx;
  return rng.chance(0.85) ? `2026.${String(rng.int(1, 12)).padStart(2, '0')}.${String(rng.int(1, 4)).padStart(2, '0')}` : enc(rng.pick(JUNK_VERSIONS));
}

/** A device UUID for a write: a fuzz device's, one nobody enrolled yet, or junk; never the canary's. */
export function fuzzUuid(ctx: GenContext): string {
  const { rng } = ctx;
  return rng.pick([...ctx.devices.map((d) => d.uuid), `fuzz-x-${rng.int(0, 50)}`, enc(rng.pick(JUNK_SEGMENTS))]);
}

/** The generators' state for one run: the devices set up, the tokens to send, fresh key material. */
export function newContext(o: { rng: Rng; adminToken: string; nonSuperToken?: string; devices: Device[]; canary: Device }): GenContext {
  // Without a real non-super-user token, one signed with no key the cloud knows.
  const nonSuperToken = o.nonSuperToken ?? 'eyJhbGciOiJIUzI1NiJ9.eyJncm91cHMiOltdfQ.c2ln';
  return { rng: o.rng, adminToken: o.adminToken, nonSuperToken, devices: o.devices, canary: o.canary, keys: keyMaterial(), usedNonces: [] };
}

export function newDevice(uuid: string): Device {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { uuid, privateKey, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** Keys of every kind the enrollment must tell apart (only P-256 SPKI is accepted). */
function keyMaterial(): GenContext['keys'] {
  const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return {
    p256: ec.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    pkcs8: ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    sec1: ec.privateKey.export({ type: 'sec1', format: 'pem' }).toString(),
    p384: generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    rsa: generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    ed25519: generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}
