// The firmware update check (spec 4.1): one function from (track, current_version) to a response, with
// a cache of release tracks and of the serialized answers, because every device of the fleet polls it.
// Answers are keyed by the normalized track and current_version only, and held in a byte budget,
// least recently used out (docs/cloud-limits.md): no request, however junky, grows memory past it.
// Admin writes invalidate the cache at once on this instance and on the other workers of its `fleet
// serve` (before the write is answered: docs/cloud-workers.md); writes by another instance sharing
// the store are seen within OTA_CACHE_TTL_MS.
// A device that says who it is (X-Device-UUID) is answered according to the staged rollouts of its
// track (docs/staged-rollouts.md), and its check is handed to `onCheck` for the inventory
// (docs/device-inventory.md); a track without a rollout is answered as before, whoever asks.
import { NO_PEERS, type Peers } from '../peers/peers.ts';
import { ApiError } from '../errors.ts';
import type { FunctionLogger } from '../logging.ts';
import type { CloudStore, FirmwareRelease, ReleaseTrack, Rollout } from '../store/types.ts';
import { toManifest } from './manifest.ts';
import { reaches, reachesEveryone } from './rollout.ts';
import { candidateOf, selectUpdate } from './select.ts';
import { ByteBudgetLru } from './answer-cache.ts';
import { DEVICE_UUID, NAME, parseTrack, parseVersion, PRODUCT_HEX, VERSION } from './validate.ts';

export interface OtaAnswer {
  status: number;
  /** The JSON body, serialized once and reused. */
  body: Buffer;
  /** For a 409: what the warning about a device stuck on a revoked version names. */
  revoked?: Record<string, unknown>;
}

interface CachedTrack {
  key: string;
  track: ReleaseTrack;
  releases: FirmwareRelease[];
  /** The rollouts of the track by version, and the devices of each one's groups. */
  rollouts: Map<string, { rollout: Rollout; members: Set<string> }>;
  loadedAtMs: number;
}

interface CachedAnswer {
  /** The track load this answer was computed from; a reloaded or invalidated track makes it stale. */
  track: CachedTrack;
  answer: OtaAnswer;
  /** current_version, and the version the answer offers (rule 3), for the inventory. */
  current: string | undefined;
  offered: string | undefined;
  /** The candidate is staged: a device its rollout does not reach gets `held` instead. */
  staged?: { rollout: Rollout; members: Set<string>; held: OtaAnswer };
}

/** An OTA check seen from a device that named itself, for the inventory (docs/device-inventory.md). */
export interface OtaCheckSeen {
  uuid: string;
  track: ReleaseTrack;
  version: string;
  /** The version the answer offered (an upgrade), if any. */
  offered: string | undefined;
}

export interface OtaCacheStats {
  answers: number;
  /** Estimated bytes held by cached answers (keys, bodies, overhead); never above budgetBytes. */
  bytes: number;
  budgetBytes: number;
  tracks: number;
}

/** Default byte budget of the answer cache (OTA_CACHE_BYTES, docs/cloud-limits.md). */
export const DEFAULT_OTA_CACHE_BYTES = 4 * 1024 * 1024;
/** Release tracks kept (the one loaded longest ago goes first; tracks reload every OTA_CACHE_TTL_MS anyway); an unknown track is an empty list. */
const MAX_TRACKS = 4096;

function trackKey(t: ReleaseTrack): string {
  return `/ota/${t.class}/${t.productHex}/${t.application}`;
}

/**
 * The cache key of one answer: the normalized track (product_hex lower-cased) and current_version,
 * nothing else of the request, so query junk never makes new entries. It is written as the canonical
 * request target (`/ota/c/0x…/a?current_version=v`), so that a device sending exactly that (they all
 * do) is found with one Map lookup of the raw target, with no parsing. Undefined when the input is
 * not valid (the caller then takes the slow path, which answers 400).
 */
function answerKey(cls: string, productHex: string, application: string, currentVersion: string | string[] | undefined): string | undefined {
  if (Array.isArray(currentVersion)) return undefined;
  if (!NAME.test(cls) || !NAME.test(application) || !PRODUCT_HEX.test(productHex)) return undefined;
  if (currentVersion !== undefined && !VERSION.test(currentVersion)) return undefined;
  return keyOf(`/ota/${cls}/${productHex.toLowerCase()}/${application}`, currentVersion);
}

function keyOf(trackKey: string, currentVersion: string | undefined): string {
  return currentVersion === undefined ? trackKey : `${trackKey}?current_version=${currentVersion}`;
}

/** Serialized once, in its own allocation: a pooled Buffer would pin an 8 KB slab per cached answer. */
function json(status: number, value: unknown): OtaAnswer {
  const text = JSON.stringify(value);
  const body = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  body.write(text);
  return { status, body };
}

export class OtaService {
  private readonly tracks = new Map<string, CachedTrack>();
  private readonly answers: ByteBudgetLru<CachedAnswer>;
  /** Bumped by invalidate(): a load that started before it must not put its releases in the cache. */
  private generation = 0;
  /**
   * The track loads under way, by track, with the generation each started in: checks that miss the
   * cache while one is under way wait for it instead of reading the store again (a boot storm's
   * thousands of first checks are one read, not thousands queued at the store's gate: docs/fleet-scale.md).
   */
  private readonly loading = new Map<string, { generation: number; promise: Promise<CachedTrack> }>();
  /** Told of every check that carries a valid X-Device-UUID and a current_version. */
  onCheck: ((seen: OtaCheckSeen) => void) | undefined;

  constructor(
    private readonly store: CloudStore,
    private readonly log: FunctionLogger,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    cacheBudgetBytes: number = DEFAULT_OTA_CACHE_BYTES,
    private readonly peers: Peers = NO_PEERS,
  ) {
    this.answers = new ByteBudgetLru(cacheBudgetBytes);
    peers.onEvent(async (event) => {
      if (event.kind === 'ota-changed') this.invalidate(event.track ?? undefined);
    });
  }

  /**
   * A track changed (every track when none is named), written by this worker: forgotten here and on
   * the other workers of this serve; resolves once they all have, so the write's answer comes after.
   */
  async changed(track?: ReleaseTrack): Promise<void> {
    this.invalidate(track);
    await this.peers.broadcast({ kind: 'ota-changed', track: track ?? null });
  }

  /** Forget what is cached for a track in this process. */
  invalidate(track?: ReleaseTrack): void {
    this.generation++;
    if (track) this.tracks.delete(trackKey(track));
    else this.tracks.clear();
    // Answers point at their track object: a deleted or reloaded track makes them stale.
  }

  cacheStats(): OtaCacheStats {
    return { answers: this.answers.size, bytes: this.answers.bytes, budgetBytes: this.answers.budgetBytes, tracks: this.tracks.size };
  }

  /**
   * The answer already computed for this track and current_version, synchronously, while its track
   * is still fresh; undefined otherwise (also for invalid input). With DEBUG on, every check is
   * logged, so the shortcut is off.
   */
  cachedAnswer(cls: string, productHex: string, application: string, currentVersion: string | string[] | undefined, uuid?: string): OtaAnswer | undefined {
    if (this.log.enabled('DEBUG')) return undefined;
    const key = answerKey(cls, productHex, application, currentVersion);
    return key === undefined ? undefined : this.fresh(key, uuid);
  }

  /**
   * The same, for a request target already in canonical form (`/ota/c/0x…/a?current_version=v`,
   * product_hex in lower case): one lookup, no parsing. Undefined for any other target.
   */
  cachedForCanonicalTarget(url: string, uuid?: string): OtaAnswer | undefined {
    if (this.log.enabled('DEBUG')) return undefined;
    return this.fresh(url, uuid);
  }

  private fresh(key: string, uuid: string | undefined): OtaAnswer | undefined {
    const hit = this.answers.get(key);
    if (!hit) return undefined;
    if (!this.isFresh(hit.track)) {
      this.answers.delete(key);
      return undefined;
    }
    return this.resolve(hit, uuid);
  }

  /** The answer for this device: the staged candidate's rollout decides, and the check is reported. */
  private resolve(hit: CachedAnswer, uuid: string | undefined): OtaAnswer {
    const valid = uuid !== undefined && DEVICE_UUID.test(uuid) ? uuid : undefined;
    const held = hit.staged !== undefined && !reaches(hit.staged.rollout, valid, hit.staged.members, this.now());
    const answer = held ? hit.staged!.held : hit.answer;
    if (answer.revoked) this.logRevoked(answer.revoked);
    if (valid !== undefined && hit.current !== undefined && this.onCheck) {
      this.onCheck({ uuid: valid, track: hit.track.track, version: hit.current, offered: held ? undefined : hit.offered });
    }
    return answer;
  }

  /**
   * The whole check. Throws ApiError for 400/404/409 answers; the caller renders them.
   * `currentVersion` is the raw query value(s).
   */
  async check(cls: string, productHex: string, application: string, currentVersion: string | string[] | undefined, uuid?: string): Promise<OtaAnswer> {
    const track = parseTrack(cls, productHex, application);
    if (Array.isArray(currentVersion)) {
      throw new ApiError('invalid_version', { field: 'current_version' }, 'current_version must be given once');
    }
    const current = currentVersion === undefined ? undefined : parseVersion(currentVersion, 'current_version');
    const cached = await this.load(track);
    const key = keyOf(cached.key, current);
    let hit = this.answers.get(key);
    if (hit?.track !== cached) {
      hit = this.decide(cached, current);
      if (this.ttlMs > 0) this.answers.set(key, hit, hit.answer.body.length + (hit.staged?.held.body.length ?? 0));
    }
    const answer = this.resolve(hit, uuid);
    if (this.log.enabled('DEBUG')) {
      this.log.debug('update check', { track: { class: track.class, product_hex: track.productHex, application: track.application }, current_version: current ?? null, status: answer.status, ...(uuid ? { uuid: uuid.slice(0, 64) } : {}) });
    }
    return answer;
  }

  /** The track as this instance sees it now: releases and rollouts (the console and the image route read it). */
  async trackState(track: ReleaseTrack): Promise<{ releases: FirmwareRelease[]; rollouts: Rollout[] }> {
    const t = await this.load(track);
    return { releases: t.releases, rollouts: [...t.rollouts.values()].map((r) => r.rollout) };
  }

  private isFresh(track: CachedTrack): boolean {
    return this.tracks.get(track.key) === track && this.now() - track.loadedAtMs < this.ttlMs;
  }

  private logRevoked(details: Record<string, unknown>): void {
    this.log.warning('device on a revoked version with nothing newer released', details);
  }

  private load(track: ReleaseTrack): Promise<CachedTrack> {
    const key = trackKey(track);
    const hit = this.tracks.get(key);
    if (hit && this.now() - hit.loadedAtMs < this.ttlMs) return Promise.resolve(hit);
    // A load that started before an invalidation is not shared: it may hold what was changed since.
    const under = this.loading.get(key);
    if (under && under.generation === this.generation) return under.promise;
    const generation = this.generation;
    const promise = this.read(key, track).finally(() => {
      if (this.loading.get(key)?.promise === promise) this.loading.delete(key);
    });
    this.loading.set(key, { generation, promise });
    return promise;
  }

  private async read(key: string, track: ReleaseTrack): Promise<CachedTrack> {
    const loadedAtMs = this.now();
    const generation = this.generation;
    const [releases, rollouts] = await Promise.all([this.store.listReleases(track), this.store.listRollouts(track)]);
    const staged = new Map<string, { rollout: Rollout; members: Set<string> }>();
    for (const rollout of rollouts) {
      const members = rollout.groups.length > 0 && rollout.state === 'active' ? await this.store.devicesInGroups(rollout.groups) : new Set<string>();
      staged.set(rollout.version, { rollout, members });
    }
    const entry: CachedTrack = { key, track, releases, rollouts: staged, loadedAtMs };
    if (this.ttlMs > 0 && generation === this.generation) {
      this.tracks.delete(key);
      if (this.tracks.size >= MAX_TRACKS) this.tracks.delete(this.tracks.keys().next().value!);
      this.tracks.set(key, entry);
    }
    return entry;
  }

  /** The answer to (track, current_version); when the candidate is staged, the held answer beside it. */
  private decide(cached: CachedTrack, current: string | undefined): CachedAnswer {
    const answer = this.answerOf(cached.releases, current, cached.track, false);
    const out: CachedAnswer = { track: cached, answer: answer.answer, current, offered: answer.offered };
    const candidate = current === undefined ? undefined : candidateOf(cached.releases, current);
    const staged = candidate ? cached.rollouts.get(candidate.version) : undefined;
    // A rollout at 100 % is no rollout: the answer is the spec's for everyone (until it is changed,
    // which invalidates the track). Below that, the held answer is kept beside the offer.
    if (staged && !reachesEveryone(staged.rollout, this.now())) {
      out.staged = { ...staged, held: this.answerOf(cached.releases, current, cached.track, true).answer };
    }
    return out;
  }

  private answerOf(releases: FirmwareRelease[], current: string | undefined, track: ReleaseTrack, held: boolean): { answer: OtaAnswer; offered?: string } {
    const d = selectUpdate(releases, current, held);
    if (d.kind === 'next') return { answer: json(200, toManifest(d.release)), offered: d.release.version };
    return { answer: this.renderDecision(d, current, track) };
  }

  private renderDecision(d: ReturnType<typeof selectUpdate>, current: string | undefined, track: ReleaseTrack): OtaAnswer {
    switch (d.kind) {
      case 'list':
        return json(200, { versions: d.releases.map(toManifest) });
      case 'next':
      case 'current':
        return json(200, toManifest(d.release));
      case 'none_released':
        return json(404, new ApiError('firmware_not_found', { class: track.class, product_hex: track.productHex, application: track.application }).toBody());
      case 'current_revoked': {
        const revoked = { class: track.class, product_hex: track.productHex, application: track.application, current_version: current };
        return { ...json(409, new ApiError('current_version_revoked', revoked).toBody()), revoked };
      }
      case 'current_unknown':
        return json(404, new ApiError('current_version_unknown', { current_version: current }).toBody());
    }
  }
}
