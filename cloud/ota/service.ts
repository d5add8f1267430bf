// The firmware update check (spec 4.1): one function from (track, current_version) to a response, with
// a cache of release tracks and of the serialized answers, because every device of the fleet polls it.
// Admin writes on this instance invalidate the cache at once; writes by another instance sharing the
// store are seen within OTA_CACHE_TTL_MS.
import { ApiError } from '../errors.ts';
import type { FunctionLogger } from '../logging.ts';
import type { CloudStore, FirmwareRelease, ReleaseTrack } from '../store/types.ts';
import { toManifest } from './manifest.ts';
import { selectUpdate } from './select.ts';
import { parseTrack, parseVersion } from './validate.ts';

export interface OtaAnswer {
  status: number;
  /** The JSON body, serialized once and reused. */
  body: Buffer;
  /** For a 409: what the warning about a device stuck on a revoked version names. */
  revoked?: Record<string, unknown>;
}

interface CachedTrack {
  releases: FirmwareRelease[];
  loadedAtMs: number;
  answers: Map<string, OtaAnswer>;
}

/** Answers kept per track; a fleet reports few distinct current versions. */
const MAX_ANSWERS_PER_TRACK = 512;
const MAX_TRACKS = 4096;
/** Distinct request targets remembered for the synchronous shortcut. */
const MAX_URLS = 16_384;
const LIST_KEY = '\u0000list';

function trackKey(t: ReleaseTrack): string {
  return `${t.class}\u0000${t.productHex}\u0000${t.application}`;
}

function json(status: number, value: unknown): OtaAnswer {
  return { status, body: Buffer.from(JSON.stringify(value)) };
}

export class OtaService {
  private readonly tracks = new Map<string, CachedTrack>();
  private readonly byUrl = new Map<string, { trackKey: string; track: CachedTrack; answer: OtaAnswer }>();

  constructor(
    private readonly store: CloudStore,
    private readonly log: FunctionLogger,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Forget what is cached for a track (after a release or revocation on this instance). */
  invalidate(track?: ReleaseTrack): void {
    if (track) this.tracks.delete(trackKey(track));
    else this.tracks.clear();
    // URL entries point at their track object: a deleted or reloaded track makes them stale.
  }

  /**
   * The answer already computed for exactly this request target (path and query as received),
   * synchronously, while its track is still fresh; undefined otherwise. With DEBUG on, every check
   * is logged, so the shortcut is off.
   */
  cachedForUrl(url: string): OtaAnswer | undefined {
    const hit = this.byUrl.get(url);
    if (!hit || this.log.enabled('DEBUG')) return undefined;
    if (this.tracks.get(hit.trackKey) !== hit.track || this.now() - hit.track.loadedAtMs >= this.ttlMs) {
      this.byUrl.delete(url);
      return undefined;
    }
    if (hit.answer.revoked) this.logRevoked(hit.answer.revoked);
    return hit.answer;
  }

  /** Like check(), and remembers the answer under the raw request target for cachedForUrl(). */
  async checkUrl(url: string, cls: string, productHex: string, application: string, currentVersion: string | string[] | undefined): Promise<OtaAnswer> {
    const answer = await this.check(cls, productHex, application, currentVersion);
    const key = trackKey({ class: cls, productHex: productHex.toLowerCase(), application });
    const track = this.tracks.get(key);
    if (track && answer.status !== 400) {
      if (this.byUrl.size >= MAX_URLS) this.byUrl.clear();
      this.byUrl.set(url, { trackKey: key, track, answer });
    }
    return answer;
  }

  /**
   * The whole check. Throws ApiError for 400/404/409 answers; the caller renders them.
   * `currentVersion` is the raw query value(s).
   */
  async check(cls: string, productHex: string, application: string, currentVersion: string | string[] | undefined): Promise<OtaAnswer> {
    const track = parseTrack(cls, productHex, application);
    if (Array.isArray(currentVersion)) {
      throw new ApiError('invalid_version', { field: 'current_version' }, 'current_version must be given once');
    }
    const current = currentVersion === undefined ? undefined : parseVersion(currentVersion, 'current_version');
    const cached = await this.load(track);
    const key = current ?? LIST_KEY;
    let answer = cached.answers.get(key);
    if (!answer) {
      answer = this.decide(cached.releases, current, track);
      if (cached.answers.size >= MAX_ANSWERS_PER_TRACK) cached.answers.clear();
      cached.answers.set(key, answer);
    }
    if (this.log.enabled('DEBUG')) {
      this.log.debug('update check', { track: { class: track.class, product_hex: track.productHex, application: track.application }, current_version: current ?? null, status: answer.status });
    }
    if (answer.revoked) this.logRevoked(answer.revoked);
    return answer;
  }

  private logRevoked(details: Record<string, unknown>): void {
    this.log.warning('device on a revoked version with nothing newer released', details);
  }

  private async load(track: ReleaseTrack): Promise<CachedTrack> {
    const key = trackKey(track);
    const nowMs = this.now();
    const hit = this.tracks.get(key);
    if (hit && nowMs - hit.loadedAtMs < this.ttlMs) return hit;
    const releases = await this.store.listReleases(track);
    const entry: CachedTrack = { releases, loadedAtMs: nowMs, answers: new Map() };
    if (this.ttlMs > 0) {
      if (this.tracks.size >= MAX_TRACKS) this.tracks.clear();
      this.tracks.set(key, entry);
    }
    return entry;
  }

  private decide(releases: FirmwareRelease[], current: string | undefined, track: ReleaseTrack): OtaAnswer {
    const d = selectUpdate(releases, current);
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
