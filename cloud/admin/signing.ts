// A track's signing setting (docs/secure-boot.md, The cloud): whether its hosted images must carry a
// Secure Boot v2 signature by one of the keys it trusts (their digests, as SECURE_BOOT_DIGESTn holds
// them). GET reads it (never set: signing off, no keys); PUT replaces it. Super users only, audited as
// every admin write (./audit.ts). The release check that applies it: cloud/ota/release-checks.ts.
import { Router, type Request } from 'express';
import { ApiError } from '../errors.ts';
import { route, sendJson } from '../http.ts';
import { requireJsonBody } from '../json-body.ts';
import type { FunctionLogger } from '../logging.ts';
import { TrackSigningBody, type TrackSigning as TrackSigningShape } from '../schema/api.ts';
import { checked, checker } from '../schema/request.ts';
import type { CloudStore, ReleaseTrack, TrackSigning } from '../store/types.ts';
import type { Static } from '@sinclair/typebox';
import { trackParams, who } from './audit.ts';

export const SIGNING_ROUTE = '/admin/tracks/:class/:product_hex/:application/signing';
const checkSigning = checker(TrackSigningBody);

export type TrackSigningView = Static<typeof TrackSigningShape>;

/** A setting from a request body: the shape, then digests lower-cased and each listed once, and a key when required. */
export function parseSigning(body: unknown, at: string): TrackSigning {
  const b = checked(checkSigning, body, 'invalid_track_signing');
  const keys = b.keys.map((k) => ({ digest: k.digest.toLowerCase(), ...(k.label === undefined ? {} : { label: k.label }) }));
  const seen = new Set<string>();
  for (const [i, k] of keys.entries()) {
    if (seen.has(k.digest)) throw new ApiError('invalid_track_signing', { field: `keys[${i}].digest`, value: k.digest }, `keys[${i}].digest: ${k.digest} is listed twice`);
    seen.add(k.digest);
  }
  if (b.required && keys.length === 0) {
    throw new ApiError('invalid_track_signing', { field: 'keys', expected: 'at least one key when required is true' }, 'keys: signing required with no trusted key would refuse every image; list at least one key digest');
  }
  return { required: b.required, keys, updatedAt: at };
}

export function signingView(t: ReleaseTrack, s: TrackSigning | null): TrackSigningView {
  return {
    class: t.class,
    product_hex: t.productHex,
    application: t.application,
    required: s?.required ?? false,
    keys: (s?.keys ?? []).map((k) => ({ digest: k.digest, ...(k.label === undefined ? {} : { label: k.label }) })),
    updated_at: s?.updatedAt ?? null,
  };
}

export function signingRoutes(store: CloudStore, log: FunctionLogger, now: () => number): Router {
  const router = Router();
  router.get(
    SIGNING_ROUTE,
    route(async (req, res) => {
      const t = trackParams(req);
      sendJson(res, 200, signingView(t, await store.getTrackSigning(t)));
    }),
  );
  router.put(
    SIGNING_ROUTE,
    route(async (req, res) => {
      const t = trackParams(req);
      const signing = parseSigning(requireJsonBody(req), new Date(now()).toISOString());
      const saved = await store.putTrackSigning(t, signing);
      const digests = saved.keys.map((k) => k.digest);
      res.locals.audit = { required: saved.required, keys: digests };
      log.info(saved.required ? 'track signing required' : 'track signing off', { class: t.class, product_hex: t.productHex, application: t.application, keys: digests, by: who(res) });
      sendJson(res, 200, signingView(t, saved));
    }),
  );
  return router;
}
