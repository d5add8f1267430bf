// PUT /admin/devices/{uuid} accepts only an SPKI ECDSA P-256 public key. node's createPublicKey also
// takes a PKCS#8 or SEC1 *private* key and derives its public half: such a PEM used to be stored and
// echoed back (201), and shown again by GET. Now it is a 400 that neither stores, echoes nor logs it.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

let cloud: TestCloud;
beforeAll(async () => {
  cloud = await startTestCloud();
  // DEBUG for the admin function, so that a leak into the logs would show.
  expect((await cloud.admin('PATCH', '/appconfig/svc-func-admin', { logging: 'DEBUG' })).status).toBe(200);
  expect((await cloud.admin('POST', '/appconfig/svc-func-admin/deploy')).status).toBe(202);
});
afterAll(() => cloud.close());

const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const spki = p256.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const pkcs8 = p256.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const sec1 = p256.privateKey.export({ type: 'sec1', format: 'pem' }).toString();

/** The base64 body of a PEM, to look for it anywhere it must not be. */
function secretPart(pem: string): string {
  return pem.split('\n')[2]!;
}

describe('a private key sent as public_key', () => {
  it.each([
    ['PKCS#8', pkcs8],
    ['SEC1', sec1],
    ['a public key followed by its private key', spki + pkcs8],
  ])('%s is refused with 400, not stored, not echoed, not logged', async (_label, pem) => {
    const res = await cloud.admin('PUT', '/admin/devices/dev-priv', { public_key: pem });
    const text = await res.text();
    expect(res.status).toBe(400);
    expect(JSON.parse(text)).toEqual({
      error: 'invalid_public_key',
      message: 'public_key is a private key; send only the public key, PEM SPKI (-----BEGIN PUBLIC KEY-----)',
      details: { reason: 'private_key' },
    });
    expect(text).not.toContain(secretPart(pkcs8));
    expect(text).not.toContain(secretPart(sec1));
    expect((await cloud.admin('GET', '/admin/devices/dev-priv')).status).toBe(404);
    expect(JSON.stringify(cloud.logs)).not.toContain(secretPart(pem.includes('EC PRIVATE') ? sec1 : pkcs8));
  });

  it('does not replace the key of an enrolled device', async () => {
    expect((await cloud.admin('PUT', '/admin/devices/dev-keep', { public_key: spki })).status).toBe(201);
    expect((await cloud.admin('PUT', '/admin/devices/dev-keep', { public_key: pkcs8 })).status).toBe(400);
    const shown = (await (await cloud.admin('GET', '/admin/devices/dev-keep')).json()) as { public_key: string };
    expect(shown.public_key).toBe(spki);
  });
});

describe('public keys that are not P-256', () => {
  it.each([
    ['P-384', generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey, { key_type: 'ec', curve: 'secp384r1' }],
    ['secp256k1', generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey, { key_type: 'ec', curve: 'secp256k1' }],
    ['RSA', generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey, { key_type: 'rsa' }],
    ['Ed25519', generateKeyPairSync('ed25519').publicKey, { key_type: 'ed25519' }],
  ])('%s is refused with 400 naming the key type', async (_label, key, details) => {
    const pem = key.export({ type: 'spki', format: 'pem' }).toString();
    const res = await cloud.admin('PUT', '/admin/devices/dev-curve', { public_key: pem });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'invalid_public_key',
      message: 'public_key must be an ECDSA P-256 (prime256v1) key',
      details: { reason: 'unsupported_key', ...details },
    });
    expect((await cloud.admin('GET', '/admin/devices/dev-curve')).status).toBe(404);
  });

  it.each([
    ['a PKCS#1 RSA public key', generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'pkcs1', format: 'pem' }).toString()],
    ['an SPKI block with text around it', `junk\n${spki}junk\n`],
    ['an empty PUBLIC KEY block', '-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n'],
    ['a cut SPKI block', spki.slice(0, 80)],
  ])('%s is refused as not SPKI PEM', async (_label, pem) => {
    const res = await cloud.admin('PUT', '/admin/devices/dev-shape', { public_key: pem });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_public_key', details: { reason: 'not_spki_pem' } });
  });
});

describe('an SPKI P-256 public key', () => {
  it('is enrolled and stored in canonical form (CRLF line ends, surrounding blanks)', async () => {
    const res = await cloud.admin('PUT', '/admin/devices/dev-crlf', { public_key: `\n${spki.replace(/\n/g, '\r\n')}  ` });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ uuid: 'dev-crlf', public_key: spki });
  });
});
