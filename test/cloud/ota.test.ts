// GET /ota/{class}/{product_hex}/{application}: the five response rules of spec 4.1, strict scoping
// to the triple, string order, REVOKED never a candidate; over real sockets, through the fast path and
// through the Express route alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

describe.each([
  ['fast path', '1'],
  ['Express route', '0'],
])('OTA check via the %s', (_label, fastPath) => {
  let cloud: TestCloud;
  const CLS = 'ctl-s3';
  const PRODUCT = '0x0A0B0C0D';
  const base = `/ota/${CLS}/${PRODUCT}/${CLS}`;

  async function release(version: string, product = PRODUCT, cls = CLS, app = cls, meta: object = { no_image: true }) {
    const res = await cloud.admin('PUT', `/admin/firmware/${cls}/${product}/${app}/${version}`, meta);
    expect(res.status).toBe(201);
    return res.json() as any;
  }

  async function revoke(version: string, product = PRODUCT, cls = CLS) {
    const res = await cloud.admin('POST', `/admin/firmware/${cls}/${product}/${cls}/${version}/revoke`);
    expect(res.status).toBe(200);
  }

  async function check(query: string, path = base) {
    const res = await fetch(cloud.url + path + query);
    return { status: res.status, body: (await res.json() as any) as Record<string, unknown>, type: res.headers.get('content-type') };
  }

  beforeAll(async () => {
    cloud = await startTestCloud({ env: { OTA_FAST_PATH: fastPath } });
    await release('2026.01.01', PRODUCT, CLS, CLS, { url: 'https://fw.example/ctl/2026.01.01.bin', size: 1048576, sha256: 'ab'.repeat(32) });
    await release('2026.02.01');
    await release('2026.02.02');
    await release('2026.03.01');
    await revoke('2026.02.02');
    // Same class, other product; other class, same product: never served across.
    await release('2026.09.01', '0x0A0B0C0E');
    await release('2026.09.02', PRODUCT, 'other-class');
  });
  afterAll(() => cloud.close());

  describe('rule 1: current_version missing', () => {
    it('lists every RELEASED version of the triple, oldest first, without REVOKED ones', async () => {
      const { status, body } = await check('');
      expect(status).toBe(200);
      const versions = (body.versions as { version: string; status: string }[]).map((v) => v.version);
      expect(versions).toEqual(['2026.01.01', '2026.02.01', '2026.03.01']);
      expect((body.versions as { status: string }[]).every((v) => v.status === 'RELEASED')).toBe(true);
    });
  });

  describe('rule 2: no RELEASED firmware for the triple', () => {
    it('answers 404 for an unknown triple, with or without current_version', async () => {
      for (const q of ['', '?current_version=2026.01.01']) {
        const { status, body } = await check(q, `/ota/${CLS}/0x99999999/${CLS}`);
        expect(status).toBe(404);
        expect(body.error).toBe('firmware_not_found');
      }
    });

    it('answers 404 when every version of the triple is REVOKED', async () => {
      await release('2026.05.01', '0x00000005');
      await revoke('2026.05.01', '0x00000005');
      const { status, body } = await check('?current_version=2026.01.01', `/ota/${CLS}/0x00000005/${CLS}`);
      expect(status).toBe(404);
      expect(body.error).toBe('firmware_not_found');
    });

    it('never serves another product of the same class, nor another class of the same product', async () => {
      const { body } = await check('?current_version=2026.03.01');
      expect(body.version).toBe('2026.03.01');
      const app = await check('', `/ota/${CLS}/${PRODUCT}/other-class`);
      expect(app.status).toBe(404); // class ctl-s3, application other-class: no such triple
    });
  });

  describe('rule 3: the next version, never the latest', () => {
    it('offers the oldest RELEASED version above current_version', async () => {
      const { status, body } = await check('?current_version=2026.01.01');
      expect(status).toBe(200);
      expect(body).toEqual({
        class: CLS,
        product_hex: '0x0a0b0c0d',
        application: CLS,
        version: '2026.02.01',
        status: 'RELEASED',
        released_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    });

    it('skips a REVOKED version', async () => {
      const { body } = await check('?current_version=2026.02.01');
      expect(body.version).toBe('2026.03.01');
    });

    it('walks a device on an old version up one release at a time', async () => {
      const seen: string[] = [];
      let current = '2025.12.07';
      for (let i = 0; i < 10; i++) {
        const { status, body } = await check(`?current_version=${current}`);
        expect(status).toBe(200);
        if (body.version === current) break;
        seen.push(body.version as string);
        current = body.version as string;
      }
      expect(seen).toEqual(['2026.01.01', '2026.02.01', '2026.03.01']);
    });

    it('carries the image metadata in the manifest', async () => {
      const { body } = await check('?current_version=2025.01.01');
      expect(body).toMatchObject({ version: '2026.01.01', url: 'https://fw.example/ctl/2026.01.01.bin', size: 1048576, sha256: 'ab'.repeat(32) });
    });

    it('orders by string comparison (build numbers within a month)', async () => {
      const p = '0x00000010';
      for (const v of ['2026.04.10', '2026.04.02', '2026.04.09']) await release(v, p);
      const { body } = await check('?current_version=2026.04.02', `/ota/${CLS}/${p}/${CLS}`);
      expect(body.version).toBe('2026.04.09');
    });
  });

  describe('rule 4: nothing newer, current is RELEASED', () => {
    it('answers the manifest of the current version', async () => {
      const { status, body } = await check('?current_version=2026.03.01');
      expect(status).toBe(200);
      expect(body.version).toBe('2026.03.01');
      expect(body.status).toBe('RELEASED');
    });
  });

  describe('rule 5: nothing newer, current is REVOKED', () => {
    it('answers 409', async () => {
      const p = '0x00000020';
      await release('2026.06.01', p);
      await release('2026.06.02', p);
      await revoke('2026.06.02', p);
      const { status, body } = await check('?current_version=2026.06.02', `/ota/${CLS}/${p}/${CLS}`);
      expect(status).toBe(409);
      expect(body.error).toBe('current_version_revoked');
      // Answered again (from the cache): each check is still logged at WARNING for the operators.
      await check('?current_version=2026.06.02', `/ota/${CLS}/${p}/${CLS}`);
      const warnings = cloud.logs.filter((l) => l.level === 'WARNING' && l.function === 'svc-func-ota' && l.current_version === '2026.06.02');
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toMatchObject({ msg: 'device on a revoked version with nothing newer released', product_hex: p });
      // A device on the revoked version is offered a newer release as soon as one exists.
      await release('2026.07.01', p);
      const after = await check('?current_version=2026.06.02', `/ota/${CLS}/${p}/${CLS}`);
      expect(after.status).toBe(200);
      expect(after.body.version).toBe('2026.07.01');
    });

    it('a revocation takes effect on the next check (no stale cache)', async () => {
      const p = '0x00000030';
      await release('2026.08.01', p);
      await release('2026.08.02', p);
      expect((await check('?current_version=2026.08.01', `/ota/${CLS}/${p}/${CLS}`)).body.version).toBe('2026.08.02');
      await revoke('2026.08.02', p);
      expect((await check('?current_version=2026.08.01', `/ota/${CLS}/${p}/${CLS}`)).body.version).toBe('2026.08.01');
    });
  });

  describe('unknown current_version with nothing newer', () => {
    it('answers 404 current_version_unknown, never an older version (no downgrade)', async () => {
      const { status, body } = await check('?current_version=2027.01.01');
      expect(status).toBe(404);
      expect(body.error).toBe('current_version_unknown');
    });

    it('an unknown version older than a release still gets the next release', async () => {
      const { body } = await check('?current_version=2026.02.05');
      expect(body.version).toBe('2026.03.01');
    });
  });

  describe('input validation', () => {
    it('compares product_hex case-insensitively', async () => {
      const { status, body } = await check('?current_version=2026.01.01', `/ota/${CLS}/0x0a0b0c0d/${CLS}`);
      expect(status).toBe(200);
      expect(body.version).toBe('2026.02.01');
    });

    it.each([
      ['0x0A0B0C0', 'invalid_product_hex'],
      ['0A0B0C0D00', 'invalid_product_hex'],
      ['0x0A0B0C0G', 'invalid_product_hex'],
      ['0x0A0B0C0D0', 'invalid_product_hex'],
    ])('refuses product_hex %s with 400', async (p, code) => {
      const { status, body } = await check('', `/ota/${CLS}/${p}/${CLS}`);
      expect(status).toBe(400);
      expect(body).toMatchObject({ error: code, message: expect.any(String) });
    });

    it.each(['2026.1.01', '2026-01-01', 'latest', '2026.01.01.1', ''])('refuses current_version %j with 400', async (v) => {
      const { status, body } = await check(`?current_version=${encodeURIComponent(v)}`);
      expect(status).toBe(400);
      expect(body.error).toBe('invalid_version');
    });

    it('refuses current_version given twice', async () => {
      const { status } = await check('?current_version=2026.01.01&current_version=2026.02.01');
      expect(status).toBe(400);
    });

    it('refuses a class with characters outside the allowed set', async () => {
      const { status, body } = await check('', `/ota/bad%20class/${PRODUCT}/x`);
      expect(status).toBe(400);
      expect(body.error).toBe('invalid_name');
    });

    it('answers JSON with a content type', async () => {
      const { type } = await check('?current_version=2026.01.01');
      expect(type).toMatch(/^application\/json/);
    });

    it('answers HEAD through Express with the same status and no body', async () => {
      const res = await fetch(`${cloud.url}${base}?current_version=2026.01.01`, { method: 'HEAD' });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('');
    });

    it('a path with a trailing segment is not the OTA route', async () => {
      const { status, body } = await check('', `${base}/extra`);
      expect(status).toBe(404);
      expect(body.error).toBe('route_not_found');
    });
  });
});

describe('OTA cache across instances sharing a store', () => {
  it('a release made on another instance is served within OTA_CACHE_TTL_MS, never a stale answer after that', async () => {
    const a = await startTestCloud({ env: { OTA_CACHE_TTL_MS: '300' } });
    const b = await startTestCloud({ store: a.store, env: { OTA_CACHE_TTL_MS: '300' } });
    try {
      const path = '/ota/ctl/0x0000cafe/ctl?current_version=2026.01.01';
      expect((await b.admin('PUT', '/admin/firmware/ctl/0x0000cafe/ctl/2026.01.01', { no_image: true })).status).toBe(201);
      const first = await (await fetch(a.url + path)).json() as any;
      expect(first.version).toBe('2026.01.01');
      expect((await b.admin('PUT', '/admin/firmware/ctl/0x0000cafe/ctl/2026.02.01', { no_image: true })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 350));
      const later = await (await fetch(a.url + path)).json() as any;
      expect(later.version).toBe('2026.02.01');
    } finally {
      await b.close();
      await a.close();
    }
  });
});
