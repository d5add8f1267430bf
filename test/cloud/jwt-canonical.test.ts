// A bearer token whose signature is spelled with a different last base64url character (whose unused
// low bits the decoder ignores) used to verify as the same token: three other spellings of every
// HS256 token were accepted. Only the canonical spelling is accepted now.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
let cloud: TestCloud;
beforeAll(async () => {
  cloud = await startTestCloud();
});
afterAll(() => cloud.close());

it('only the canonical spelling of a token’s signature is accepted', async () => {
  const token = await cloud.token();
  const get = (t: string) => fetch(`${cloud.url}/admin/devices`, { headers: { authorization: `Bearer ${t}` } });
  expect((await get(token)).status).toBe(200);
  const last = token.length - 1;
  const statuses = new Map<number, number>();
  for (const c of ALPHABET) {
    if (c === token[last]) continue;
    const res = await get(token.slice(0, last) + c);
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    if (res.status === 401) expect(await res.json()).toEqual({ error: 'invalid_token', message: 'The bearer token is invalid or expired' });
  }
  expect([...statuses]).toEqual([[401, 63]]);
});
