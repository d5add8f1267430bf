// The JWT super-user authorizer itself (DESIGN.md section 4, docs/jwt.md): `Authorization: Bearer
// <token>` and nothing else around it, HS256 only in secret mode, the super user's subject kept for
// the audit records, and the tokens `fleet token` mints. Called directly, without HTTP (which trims
// header values, so the verifier's own trimming is tested here).
import { describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { createTokenVerifier, mintToken } from '../../cloud/auth/jwt.ts';
import type { JwtConfig } from '../../cloud/config.ts';

const secret = new TextEncoder().encode('verifier-test-secret-0123456789');
const config: JwtConfig = { mode: 'hs256', secret, secretSource: 'test', groupsClaim: 'groups', superuserGroup: 'superuser' };
const verify = createTokenVerifier(config);

async function code(authorization: string | undefined): Promise<string> {
  try {
    await verify(authorization);
  } catch (err) {
    return (err as { code: string }).code;
  }
  return 'accepted';
}

describe('createTokenVerifier', () => {
  it('accepts a super user and returns its subject and claims', async () => {
    const token = await mintToken(secret, { subject: 'alice@example', groups: ['viewer', 'superuser'] });
    const user = await verify(`Bearer ${token}`);
    expect(user.subject).toBe('alice@example');
    expect(user.claims.groups).toEqual(['viewer', 'superuser']);
    expect(user.claims.sub).toBe('alice@example');
  });

  it('white space around the header value is not part of it; blank is a missing token', async () => {
    const token = await mintToken(secret, { subject: 'alice@example' });
    expect(await code(`  Bearer ${token} \t`)).toBe('accepted');
    expect(await code('   ')).toBe('missing_token');
    expect(await code('\t')).toBe('missing_token');
    expect(await code('')).toBe('missing_token');
    expect(await code(undefined)).toBe('missing_token');
  });

  it('the whole value must be "Bearer <token>": nothing before or after it', async () => {
    const token = await mintToken(secret);
    expect(await code(`Bearer ${token}`)).toBe('accepted');
    for (const value of [`Basic Bearer ${token}`, `xBearer ${token}`, `Bearer ${token} extra`, `Bearer ${token}.x`, `Bearer ${token},Bearer ${token}`, `bearer ${token}`, `Bearer  ${token}`]) {
      expect(await code(value), value).toBe('invalid_token');
    }
  });

  it('secret mode accepts HS256 only: the same secret under HS384 or HS512 is refused', async () => {
    for (const alg of ['HS384', 'HS512']) {
      const token = await new SignJWT({ groups: ['superuser'] }).setProtectedHeader({ alg }).setSubject('mallory').setExpirationTime('5m').sign(secret);
      expect(await code(`Bearer ${token}`), alg).toBe('invalid_token');
    }
  });

  it('not a super user: 403 code, whatever else the token holds', async () => {
    expect(await code(`Bearer ${await mintToken(secret, { groups: ['viewer'] })}`)).toBe('not_superuser');
    expect(await code(`Bearer ${await mintToken(secret, { groups: [] })}`)).toBe('not_superuser');
    expect(await code(`Bearer ${await mintToken(secret, { groups: ['superuser'], groupsClaim: 'roles' })}`)).toBe('not_superuser');
  });
});

describe('mintToken (fleet token)', () => {
  it('defaults: a JWT-typed HS256 token for subject fleet-cli in the superuser group, valid for an hour', async () => {
    const token = await mintToken(secret);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(token);
    expect(claims.sub).toBe('fleet-cli');
    expect(claims.groups).toEqual(['superuser']);
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect((await verify(`Bearer ${token}`)).subject).toBe('fleet-cli');
  });

  it('the subject, groups, claim name and lifetime given are the ones in the token', async () => {
    const claims = decodeJwt(await mintToken(secret, { subject: 'ci-bot', groups: ['ops'], groupsClaim: 'cognito:groups', ttlSeconds: 60 }));
    expect(claims.sub).toBe('ci-bot');
    expect(claims['cognito:groups']).toEqual(['ops']);
    expect(claims.groups).toBeUndefined();
    expect(claims.exp! - claims.iat!).toBe(60);
  });
});
