// The platform's natives as the emulation provides them (firmware/sim/xs/natives.ts): the eFuse HMAC
// with a key that never enters XS, the PSA crypto (SHA-256 multipart, HMAC, AES-256-GCM with same-
// length updates and tag verification, deterministic ECDSA P-256 as r || s), esp_read_mac, and a
// missing native throwing as a build without it would.
import { createCipheriv, createHash, createHmac, createPublicKey, createVerify } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SimEngine } from '../helpers/sim-engine.ts';

let engine: SimEngine;

async function inXs(code: string): Promise<any> {
  await engine.run(`try { const hex = (b) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join(''); report({ value: (() => { ${code} })() }); } catch (e) { report({ error: e.message }); }`);
  return (await engine.reports())[0];
}

beforeAll(async () => {
  engine = await SimEngine.start({ ethernetMac: '24:0A:C4:E0:00:99' });
}, 120_000);
afterAll(async () => {
  await engine?.close();
});

it('computes the fuse HMAC with the host-held key; XS never holds the key', async () => {
  const r = await inXs(`return hex(native('xs_fw_fuse_hmac')(new Uint8Array([1, 2, 3])))`);
  expect(r.value).toBe(engine.expectedHmac(Buffer.from([1, 2, 3])).toString('hex'));
  expect(await inXs(`return JSON.stringify(Object.keys(globalThis)).includes('5a5a5a5a')`)).toEqual({ value: false });
});

it('hashes in parts, HMACs, and encrypts AES-256-GCM as the PSA natives do', async () => {
  const sha = await inXs(`const op = native('xs_fw_sha256_create')(); native('xs_fw_sha256_update')(op, new Uint8Array([97, 98])); native('xs_fw_sha256_update')(op, new Uint8Array([99])); return hex(native('xs_fw_sha256_finish')(op));`);
  expect(sha.value).toBe(createHash('sha256').update('abc').digest('hex'));
  const hmac = await inXs(`return hex(native('xs_fw_hmac_sha256')(new Uint8Array(32).fill(7), new Uint8Array([1])))`);
  expect(hmac.value).toBe(createHmac('sha256', Buffer.alloc(32, 7)).update(Buffer.from([1])).digest('hex'));
  const gcm = await inXs(`const key = new Uint8Array(32).fill(1), iv = new Uint8Array(12).fill(2), aad = new Uint8Array([70, 70, 67, 69]);
    const op = native('xs_fw_gcm_create')(key, iv, aad, true); const c = native('xs_fw_gcm_update')(op, new Uint8Array(100).fill(3)); const tag = native('xs_fw_gcm_finish')(op);
    const d = native('xs_fw_gcm_create')(key, iv, aad, false); const p = native('xs_fw_gcm_update')(d, c); const ok = native('xs_fw_gcm_verify')(d, tag);
    const bad = native('xs_fw_gcm_create')(key, iv, aad, false); native('xs_fw_gcm_update')(bad, c); const forged = new Uint8Array(tag).slice(); forged[0] ^= 1;
    return { c: hex(c), tag: hex(tag), plainLength: p.byteLength, ok, forged: native('xs_fw_gcm_verify')(bad, forged) };`);
  const cipher = createCipheriv('aes-256-gcm', Buffer.alloc(32, 1), Buffer.alloc(12, 2));
  cipher.setAAD(Buffer.from('FFCE'));
  const expected = Buffer.concat([cipher.update(Buffer.alloc(100, 3)), cipher.final()]);
  expect(gcm.value).toEqual({ c: expected.toString('hex'), tag: cipher.getAuthTag().toString('hex'), plainLength: 100, ok: true, forged: false });
});

it('signs P-256 deterministically (RFC 6979) as r || s that verifies with the public key', async () => {
  const r = await inXs(`const key = new Uint8Array(32).fill(9); const m = new Uint8Array([1, 2, 3]);
    return { a: hex(native('xs_fw_p256_sign')(key, m)), b: hex(native('xs_fw_p256_sign')(key, m)), pub: hex(native('xs_fw_p256_public_key')(key)) };`);
  expect(r.value.a).toBe(r.value.b);
  expect(r.value.a).toHaveLength(128);
  const pub = Buffer.from(r.value.pub, 'hex');
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: pub.subarray(1, 33).toString('base64url'), y: pub.subarray(33).toString('base64url') }, format: 'jwk' });
  const ok = createVerify('sha256').update(Buffer.from([1, 2, 3])).verify({ key, dsaEncoding: 'ieee-p1363' }, Buffer.from(r.value.a, 'hex'));
  expect(ok).toBe(true);
});

it('reads the factory MACs (SoftAP = station + 1) and refuses a native the build lacks', async () => {
  expect(await inXs(`return ['station', 'softap', 'ethernet'].map((k) => hex(native('xs_fw_mac_address')(k)))`)).toEqual({ value: ['240ac4100099', '240ac410009a', '240ac4e00099'] });
  expect(await inXs(`return native('xs_fw_nothing')`)).toEqual({ error: 'native function xs_fw_nothing not found' });
});
