// JWT super-user authorizer for /appconfig and /admin (spec 5, DESIGN.md section 4):
// `Authorization: Bearer <token>`; missing or invalid token 401; not a super user 403. A super user
// has the configured group in the array claim (default `groups` contains `superuser`).
import { createRemoteJWKSet, jwtVerify, SignJWT, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { ApiError } from '../errors.ts';

/** How tokens are verified (config.ts reads it from the environment). */
export type JwtConfig =
  | { mode: 'hs256'; secret: Uint8Array; secretSource: string; groupsClaim: string; superuserGroup: string }
  | {
      mode: 'jwks';
      jwksUrl: string;
      issuer: string | undefined;
      audience: string | undefined;
      groupsClaim: string;
      superuserGroup: string;
    };

export interface SuperUser {
  subject: string | undefined;
  claims: JWTPayload;
}

export type TokenVerifier = (authorization: string | undefined) => Promise<SuperUser>;

const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/;

export function createTokenVerifier(config: JwtConfig): TokenVerifier {
  const jwks: JWTVerifyGetKey | undefined = config.mode === 'jwks' ? createRemoteJWKSet(new URL(config.jwksUrl)) : undefined;
  return async (authorization) => {
    if (authorization === undefined || authorization.trim() === '') throw new ApiError('missing_token');
    const m = BEARER.exec(authorization.trim());
    if (!m) throw new ApiError('invalid_token');
    // The signature must be canonical base64url: the decoder ignores the unused low bits of the last
    // character, so without this check several spellings of one token all verified.
    const signature = m[1]!.slice(m[1]!.lastIndexOf('.') + 1);
    if (Buffer.from(signature, 'base64url').toString('base64url') !== signature) throw new ApiError('invalid_token');
    let payload: JWTPayload;
    try {
      if (config.mode === 'hs256') {
        ({ payload } = await jwtVerify(m[1]!, config.secret, { algorithms: ['HS256'] }));
      } else {
        ({ payload } = await jwtVerify(m[1]!, jwks!, {
          issuer: config.issuer,
          audience: config.audience,
        }));
      }
    } catch {
      throw new ApiError('invalid_token');
    }
    const groups = payload[config.groupsClaim];
    if (!Array.isArray(groups) || !groups.includes(config.superuserGroup)) throw new ApiError('not_superuser');
    return { subject: payload.sub, claims: payload };
  };
}

/** Mints an HS256 token (the embedded default). Used by `fleet token`, tests and the bench. */
export async function mintToken(
  secret: Uint8Array,
  opts: { subject?: string; groups?: string[]; groupsClaim?: string; ttlSeconds?: number } = {},
): Promise<string> {
  const claim = opts.groupsClaim ?? 'groups';
  return new SignJWT({ [claim]: opts.groups ?? ['superuser'] })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(opts.subject ?? 'fleet-cli')
    .setIssuedAt()
    .setExpirationTime(`${opts.ttlSeconds ?? 3600}s`)
    .sign(secret);
}
