// The cloud fuzz's set-up and its canary: two fuzz devices enrolled, and a canary device with a
// backup and a firmware release stored before the run that must be byte-identical after it.
import { createHash } from 'node:crypto';
import { signDeviceRequest } from '../../device-signer.ts';
import { httpRequest, rawExchange, type RawResponse, type RawResult, type RawTarget } from '../raw-http.ts';
import type { Rng } from '../rng.ts';
import { CANARY_TRACK, newDevice, pathOf, type Device } from './context.ts';
import { signatureHeaderList } from './generators.ts';

export interface Canary {
  device: Device;
  backup: Buffer;
  snapshot: string;
}

const CANARY_RELEASES = pathOf('admin', 'firmware', CANARY_TRACK.cls, CANARY_TRACK.productHex, CANARY_TRACK.application);

export async function adminCall(target: RawTarget, token: string, method: string, path: string, body?: unknown): Promise<RawResponse> {
  const headers: [string, string][] = [['Authorization', `Bearer ${token}`], ['Connection', 'close']];
  if (body !== undefined) headers.push(['Content-Type', 'application/json']);
  const res = await rawExchange(target, httpRequest(method, path, headers, body === undefined ? undefined : JSON.stringify(body)), { methods: [method], expectResponses: 1 });
  const r = res.responses[0];
  if (!r) throw new Error(`${method} ${path}: no answer`);
  return r;
}

function signedGet(target: RawTarget, device: Device, path: string, method = 'GET'): Promise<RawResult> {
  const nonce = Buffer.alloc(32, 0xc4);
  nonce.writeDoubleBE(Date.now() + Math.random());
  const headers = signatureHeaderList(signDeviceRequest(device.privateKey, device.uuid, { nonce }));
  return rawExchange(target, httpRequest(method, path, [...headers, ['Connection', 'close']]), { methods: [method], expectResponses: 1 });
}

/** Everything about the canary that must not change, as one string. */
export async function canarySnapshot(target: RawTarget, token: string, device: Device): Promise<{ text: string; backup: Buffer }> {
  const backup = await signedGet(target, device, pathOf('devices', device.uuid, 'backup'));
  const b = backup.responses[0];
  if (!b || b.status !== 200) throw new Error(`canary backup GET: ${b?.status ?? 'no answer'} ${b?.body.toString().slice(0, 200) ?? ''}`);
  const dev = await adminCall(target, token, 'GET', pathOf('admin', 'devices', device.uuid));
  const fw = await adminCall(target, token, 'GET', CANARY_RELEASES);
  const otaPath = `${pathOf('ota', CANARY_TRACK.cls, CANARY_TRACK.productHex, CANARY_TRACK.application)}?current_version=2025.01.01`;
  const ota = await rawExchange(target, httpRequest('GET', otaPath, [['Connection', 'close']]), { expectResponses: 1 });
  const text = JSON.stringify({
    backup_sha256: createHash('sha256').update(b.body).digest('hex'),
    backup_etag: b.headers.etag,
    backup_last_modified: b.headers['last-modified'],
    device: [dev.status, dev.body.toString('utf8')],
    firmware: [fw.status, fw.body.toString('utf8')],
    ota: [ota.responses[0]?.status, ota.responses[0]?.body.toString('utf8')],
  });
  return { text, backup: b.body };
}

export async function setUp(target: RawTarget, token: string, rng: Rng): Promise<{ devices: Device[]; canary: Canary }> {
  const devices = [newDevice('fuzz-dev-1'), newDevice('fuzz-dev-2')];
  const canaryDevice = newDevice(`canary-${rng.u32().toString(16)}`);
  for (const d of [...devices, canaryDevice]) {
    const r = await adminCall(target, token, 'PUT', pathOf('admin', 'devices', d.uuid), { public_key: d.publicKeyPem });
    if (r.status !== 201 && r.status !== 200) throw new Error(`enroll ${d.uuid}: ${r.status} ${r.body.toString()}`);
  }
  const release = await adminCall(target, token, 'PUT', `${CANARY_RELEASES}/${CANARY_TRACK.version}`, {
    url: 'https://fw.example/canary.bin',
    size: 1_048_576,
    sha256: 'ca'.repeat(32),
  });
  if (release.status !== 201 && release.status !== 409) throw new Error(`canary release: ${release.status} ${release.body.toString()}`);
  // The canary backup: stored once with the canary's own key, which the fuzz never uses.
  const blob = Buffer.concat([Buffer.from('FFCE'), rng.bytes(4092)]);
  const signed = signatureHeaderList(signDeviceRequest(canaryDevice.privateKey, canaryDevice.uuid, { nonce: rng.bytes(32) }));
  const headers: [string, string][] = [...signed, ['Content-Type', 'application/octet-stream'], ['ETag', '"' + 'ce'.repeat(32) + '"'], ['Connection', 'close']];
  const stored = await rawExchange(target, httpRequest('POST', pathOf('devices', canaryDevice.uuid, 'backup'), headers, blob), { methods: ['POST'], expectResponses: 1 });
  if (stored.responses[0]?.status !== 200) throw new Error(`canary backup: ${stored.responses[0]?.status ?? 'no answer'}`);
  const snap = await canarySnapshot(target, token, canaryDevice);
  if (!snap.backup.equals(blob)) throw new Error('canary backup read back differs from what was stored');
  return { devices, canary: { device: canaryDevice, backup: blob, snapshot: snap.text } };
}
