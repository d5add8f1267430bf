// The place tags the farm reads and writes (labgrid keys: a lower-case letter, then letters, digits,
// `_`). The exporter sets what a board is; jobs reserve by them; `health` and `lease` are the farm's
// own protocol on top of labgrid's places (docs/board-farm.md).
import { FarmError } from './errors.ts';

/** Tags every exported board's place carries. */
export const BOARD_TAGS = ['chip', 'role', 'build', 'mac', 'bench', 'rig'] as const;

/** `health=ok` places are handed out; `quarantined` ones are refused until a repair passes. */
export const HEALTH = { ok: 'ok', quarantined: 'quarantined' } as const;

const TAG_KEY = /^[a-z][a-z0-9_]+$/;

/** `role=controller,build=debug` → { role: 'controller', build: 'debug' }, refused with the value. */
export function parsePlaceTags(text: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const pair of text.split(',').filter(Boolean)) {
    const m = /^([^=]+)=(.+)$/.exec(pair.trim());
    if (!m || !TAG_KEY.test(m[1]!)) throw new FarmError('no_match', `--place-tags: expected key=value pairs separated by commas (keys: a lower-case letter, then letters, digits or _), got "${pair}"`);
    tags[m[1]!] = m[2]!;
  }
  if (Object.keys(tags).length === 0) throw new FarmError('no_match', `--place-tags: no key=value pair in "${text}"`);
  return tags;
}

export function showTags(tags: Record<string, string>): string {
  return Object.entries(tags).map(([k, v]) => `${k}=${v}`).join(',');
}

/** True when every tag of `wanted` is on the place, as labgrid's scheduler matches a filter (a subset). */
export function tagsMatch(wanted: Record<string, string>, tags: Record<string, string> | undefined): boolean {
  return Object.entries(wanted).every(([k, v]) => tags?.[k] === v);
}

/**
 * A job's lease on a place, renewed while the job lives: `<reservation token>@<unix seconds it ends>`.
 * The exporter's warden releases a place whose lease has ended and cancels its reservation, so a job
 * that died frees its places (warden.ts). A lease names its reservation: a lease left over from an
 * earlier holder is not the current one's.
 */
export const LEASE_TAG = 'lease';
export const LEASE_SECONDS = 20;
export const LEASE_RENEW_MS = 5_000;

export function leaseValue(token: string, nowMs = Date.now(), seconds = LEASE_SECONDS): string {
  return `${token}@${Math.ceil(nowMs / 1000) + seconds}`;
}

export function parseLease(value: string | undefined): { token: string; endsMs: number } | undefined {
  const m = /^([A-Za-z0-9]+)@(\d+)$/.exec(value ?? '');
  return m ? { token: m[1]!, endsMs: Number(m[2]) * 1000 } : undefined;
}

/** Jobs (fleet bench --farm) name their sessions so: the warden holds them to their leases. */
export const JOB_SESSION = /\/fleet-job-\d+$/;
