// Releases and their rollouts, for the admin API (and so the console): create a release from image
// metadata (the image elsewhere) or from an image the cloud then hosts (docs/firmware-images.md),
// revoke it, and steer its staged rollout (docs/staged-rollouts.md), including the pause a rollout
// takes by itself when failed installs reach its error threshold. Every write invalidates the track
// in the OTA answer cache of this instance's workers before it is answered; other instances see it
// within OTA_CACHE_TTL_MS.
import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { ChipSpec } from '../../firmware/image/chips.ts';
import { ApiError } from '../errors.ts';
import type { FunctionLogger } from '../logging.ts';
import type { Release as ReleaseShape, Rollout as RolloutShape, SignedBy } from '../schema/api.ts';
import type { CloudStore, FirmwareRelease, ImageMetadata, OutcomeCounts, OutcomeDevice, ReleaseTrack, Rollout, RolloutSettings, TrackSigning } from '../store/types.ts';
import type { SettledRelease } from './inventory.ts';
import { toManifest } from './manifest.ts';
import { checkReleaseImage } from './release-checks.ts';
import { HEALTH_MIN_DEVICE_HOURS_DEFAULT, unexpectedOf } from '../health-definitions.ts';
import { effectivePercent, healthGate, nextStep, overErrorThreshold, type HealthSample } from './rollout.ts';
import type { OtaService } from './service.ts';

/** Rollout settings as a request gives them: any may be left out (then the current value, or the default). */
export type RolloutChange = Partial<RolloutSettings>;

export const ROLLOUT_DEFAULTS: RolloutSettings = {
  percent: 0,
  groups: [],
  stepPercent: null,
  stepEverySeconds: null,
  errorThresholdPercent: 20,
  minReports: 5,
  healthMargin: null,
  healthMinDeviceHours: HEALTH_MIN_DEVICE_HOURS_DEFAULT,
};

export interface HostedReleaseRequest {
  image: Buffer;
  chip: ChipSpec;
  /** Expected project; by default the track's newest hosted release's. */
  project: string | undefined;
  /** The SHA-256 the uploader computed; checked against the bytes received. */
  declaredSha256: string | undefined;
  /** Where devices reach this cloud: the image's URL starts with it. */
  baseUrl: string;
  rollout: RolloutChange | undefined;
}

/** A rollout as the admin API shows it (cloud/schema/api.ts, Rollout). */
export type RolloutView = Static<typeof RolloutShape>;
/** A release as the admin API lists it (cloud/schema/api.ts, Release). */
export type ReleaseView = Static<typeof ReleaseShape>;

/** The public path of a hosted image: GET /images/{class}/{product_hex}/{application}/{version}.bin. */
export function imagePath(t: ReleaseTrack, version: string): string {
  return `/images/${encodeURIComponent(t.class)}/${encodeURIComponent(t.productHex)}/${encodeURIComponent(t.application)}/${encodeURIComponent(version)}.bin`;
}

export class ReleaseService {
  constructor(
    private readonly store: CloudStore,
    private readonly ota: OtaService,
    private readonly log: FunctionLogger,
    private readonly now: () => number,
  ) {}

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  private newRollout(t: ReleaseTrack, version: string, change: RolloutChange, at: string): Rollout {
    return { ...t, version, ...ROLLOUT_DEFAULTS, ...definedOnly(change), state: 'active', anchorAtMs: this.now(), pausedReason: null, createdAt: at, updatedAt: at };
  }

  /**
   * A release whose image is elsewhere (its metadata only), as before; with a rollout when asked. Not on
   * a track that requires signed images: the cloud cannot check an image it does not see.
   */
  async createFromMetadata(t: ReleaseTrack, version: string, image: ImageMetadata, rollout: RolloutChange | undefined): Promise<FirmwareRelease> {
    if ((await this.store.getTrackSigning(t))?.required) {
      throw new ApiError('signing_requires_image', { version }, `This track requires signed images: release ${version} with its image (fleet firmware release --image, PUT …/image) so that the cloud checks its signature`);
    }
    const at = this.iso();
    const created = await this.store.createRelease({ ...t, ...image, version, status: 'RELEASED', releasedAt: at }, rollout ? { rollout: this.newRollout(t, version, rollout, at) } : {});
    if (!created) throw new ApiError('release_exists', { version });
    await this.ota.changed(t);
    return created;
  }

  /**
   * A release whose image the cloud hosts: every check passes first (release-checks.ts), then one write.
   * With the track's signing setting the checks read, which names the key that signed (signedByView).
   */
  async createHosted(t: ReleaseTrack, version: string, r: HostedReleaseRequest): Promise<{ created: FirmwareRelease; signing: TrackSigning | null }> {
    const sha256 = createHash('sha256').update(r.image).digest('hex');
    if (r.declaredSha256 !== undefined && r.declaredSha256 !== sha256) {
      throw new ApiError('image_sha256_mismatch', { declared: r.declaredSha256, computed: sha256 }, `The upload hashes to ${sha256}, not the declared ${r.declaredSha256} (cut or changed on the way)`);
    }
    const releases = await this.store.listReleases(t);
    if (releases.some((x) => x.version === version)) throw new ApiError('release_exists', { version });
    const newest = releases.filter((x) => x.status === 'RELEASED').at(-1);
    if (newest && newest.version > version) {
      throw new ApiError('version_older_than_released', { version, newest_released: newest.version }, `${version} is older than ${newest.version}, already RELEASED on this track`);
    }
    const project = r.project ?? releases.filter((x) => x.project !== undefined).at(-1)?.project;
    const signing = await this.store.getTrackSigning(t);
    const checked = checkReleaseImage(r.image, sha256, { version, chip: r.chip, project, signing });
    const at = this.iso();
    const release: FirmwareRelease = {
      ...t,
      version,
      status: 'RELEASED',
      releasedAt: at,
      url: `${r.baseUrl}${imagePath(t, version)}`,
      size: checked.size,
      sha256,
      chip: r.chip.name,
      project: checked.descriptor.projectName,
      ...(checked.signedBy ? { signedBy: checked.signedBy } : {}),
    };
    const created = await this.store.createRelease(release, { image: r.image, ...(r.rollout ? { rollout: this.newRollout(t, version, r.rollout, at) } : {}) });
    if (!created) throw new ApiError('release_exists', { version });
    await this.ota.changed(t);
    return { created, signing };
  }

  /** Device groups changed: a rollout by group must see its new members (every track reloads). */
  async groupsChanged(): Promise<void> {
    await this.ota.changed();
  }

  async revoke(t: ReleaseTrack, version: string): Promise<FirmwareRelease> {
    const revoked = await this.store.revokeRelease(t, version, this.iso());
    if (!revoked) throw new ApiError('release_not_found', { version });
    await this.ota.changed(t);
    return revoked;
  }

  /** Every release of a track with its rollout and outcomes (admin list, the console). */
  async list(t: ReleaseTrack): Promise<ReleaseView[]> {
    const [releases, rollouts, signing] = await Promise.all([this.store.listReleases(t), this.store.listRollouts(t), this.store.getTrackSigning(t)]);
    const byVersion = new Map(rollouts.map((r) => [r.version, r]));
    const out: ReleaseView[] = [];
    for (const r of releases) {
      const outcomes = await this.store.outcomeCounts(t, r.version);
      const rollout = byVersion.get(r.version);
      out.push({
        ...toManifest(r),
        hosted: r.hosted === true,
        ...(r.chip ? { chip: r.chip } : {}),
        ...(r.project ? { project: r.project } : {}),
        signed_by: signedByView(r, signing),
        rollout: rollout ? this.view(rollout, outcomes) : null,
        outcomes,
      });
    }
    return out;
  }

  async rollout(t: ReleaseTrack, version: string): Promise<RolloutView> {
    const r = (await this.store.listRollouts(t)).find((x) => x.version === version);
    if (!r) throw new ApiError('rollout_not_found', { version });
    return this.view(r, await this.store.outcomeCounts(t, version));
  }

  /** The devices behind a release's outcome counts, as the API answers them; 404 when the release does not exist. */
  async outcomeDevices(t: ReleaseTrack, version: string, o: { outcome?: OutcomeDevice['outcome']; after?: string; limit: number }) {
    const devices = await this.store.outcomeDevices(t, version, o);
    if (devices.length === 0 && !(await this.store.listReleases(t)).some((r) => r.version === version)) throw new ApiError('release_not_found', { version });
    return {
      devices: devices.map((d) => ({ uuid: d.uuid, outcome: d.outcome, from_version: d.fromVersion, offered_at: d.offeredAt, settled_at: d.settledAt, attempts: d.attempts })),
      next_after: devices.length === o.limit ? devices.at(-1)!.uuid : null,
    };
  }

  /** Creates the release's rollout, or changes the settings given (the others are kept); the schedule restarts from now. */
  async setRollout(t: ReleaseTrack, version: string, change: RolloutChange): Promise<{ view: RolloutView; created: boolean }> {
    const at = this.iso();
    const existing = (await this.store.listRollouts(t)).find((x) => x.version === version);
    const next: Rollout = existing
      ? { ...existing, ...definedOnly(change), anchorAtMs: this.now(), updatedAt: at, percent: change.percent ?? effectivePercent(existing, this.now()) }
      : this.newRollout(t, version, change, at);
    if ((next.stepPercent === null) !== (next.stepEverySeconds === null)) {
      throw new ApiError('invalid_rollout', { step_percent: next.stepPercent, step_every_seconds: next.stepEverySeconds }, 'A schedule needs both step_percent and step_every_seconds');
    }
    const saved = await this.store.putRollout(next);
    if (!saved) throw new ApiError('release_not_found', { version });
    await this.ota.changed(t);
    return { view: this.view(saved, await this.store.outcomeCounts(t, version)), created: !existing };
  }

  /** Pauses (idempotent): the percentage reached is kept, nobody new is offered the release. */
  async pause(t: ReleaseTrack, version: string, reason: string): Promise<RolloutView> {
    const current = (await this.store.listRollouts(t)).find((x) => x.version === version);
    if (!current) throw new ApiError('rollout_not_found', { version });
    const paused =
      (await this.store.updateRollout(t, version, { state: 'paused', percent: effectivePercent(current, this.now()), anchorAtMs: this.now(), pausedReason: reason, updatedAt: this.iso() }, 'active')) ??
      current;
    await this.ota.changed(t);
    return this.view(paused, await this.store.outcomeCounts(t, version));
  }

  /** Resumes (idempotent): the schedule counts its steps from now. */
  async resume(t: ReleaseTrack, version: string): Promise<RolloutView> {
    const current = (await this.store.listRollouts(t)).find((x) => x.version === version);
    if (!current) throw new ApiError('rollout_not_found', { version });
    const resumed = (await this.store.updateRollout(t, version, { state: 'active', anchorAtMs: this.now(), pausedReason: null, updatedAt: this.iso() }, 'paused')) ?? current;
    await this.ota.changed(t);
    return this.view(resumed, await this.store.outcomeCounts(t, version));
  }

  /** Ends the rollout: the release is then answered to every device as the spec says. */
  async deleteRollout(t: ReleaseTrack, version: string): Promise<void> {
    if (!(await this.store.deleteRollout(t, version))) throw new ApiError('rollout_not_found', { version });
    await this.ota.changed(t);
  }

  /** After a flush of OTA checks with failures: pause every active rollout over its error threshold. */
  async pauseOverThreshold(releases: SettledRelease[]): Promise<void> {
    for (const { track, version } of releases) {
      const rollout = (await this.store.listRollouts(track)).find((x) => x.version === version);
      if (!rollout || rollout.state !== 'active') continue;
      const counts = await this.store.outcomeCounts(track, version);
      if (!overErrorThreshold(rollout, counts)) continue;
      const reported = counts.succeeded + counts.failed;
      const reason = `error threshold: ${counts.failed} of ${reported} reported installs failed (threshold ${rollout.errorThresholdPercent} %, at least ${rollout.minReports} reports)`;
      await this.pauseBySystem(rollout, reason, { action: 'pauseRolloutOnErrors', warning: 'rollout paused on errors', log: { failed: counts.failed, succeeded: counts.succeeded }, details: { ...counts } });
    }
  }

  /** The previous RELEASED version of a track before `version` (what the health gate compares with), if any. */
  async previousReleased(t: ReleaseTrack, version: string): Promise<string | undefined> {
    return (await this.store.listReleases(t)).filter((r) => r.status === 'RELEASED' && r.version < version).at(-1)?.version;
  }

  /**
   * The health gate, judged when an unexpected reboot of a device on `track` was counted against
   * `version` (the only report that can raise its rate): an active rollout of that release with a
   * margin pauses by itself when the release's rate exceeds the previous RELEASED version's by more than
   * it, once the release has run its minimum device-hours (docs/staged-rollouts.md). Idempotent across
   * workers and instances: only the one that moves the rollout from active records the pause.
   */
  async pauseOnHealth(track: ReleaseTrack, version: string): Promise<void> {
    const rollout = (await this.store.listRollouts(track)).find((x) => x.version === version);
    if (!rollout || rollout.state !== 'active' || rollout.healthMargin === null) return;
    const previous = await this.previousReleased(track, version);
    const figures = await this.store.releaseHealth({ track, versions: previous ? [version, previous] : [version] });
    const sample = (v: string): HealthSample => {
      const f = figures.find((x) => x.version === v)!;
      return { version: v, unexpected: unexpectedOf(f.reboots), deviceSeconds: f.deviceSeconds };
    };
    const verdict = healthGate(rollout, sample(version), previous ? sample(previous) : null);
    if (!verdict.over) return;
    const rate = verdict.rate!.toFixed(1);
    const against = previous ? `${verdict.previousRate.toFixed(1)} on ${previous}, the previous release` : '0 (no previous release)';
    const reason = `health: ${rate} unexpected reboots per 1,000 device-hours (over ${verdict.deviceHours.toFixed(1)} device-hours) against ${against}; margin ${rollout.healthMargin}`;
    const figuresOf = { rate: verdict.rate, previous_version: previous ?? null, previous_rate: verdict.previousRate, device_hours: verdict.deviceHours, margin: rollout.healthMargin, min_device_hours: rollout.healthMinDeviceHours };
    await this.pauseBySystem(rollout, reason, { action: 'pauseRolloutOnHealth', warning: 'rollout paused on health', log: figuresOf, details: figuresOf });
  }

  /**
   * Pauses an active rollout for the cloud itself (actor `system`), with a WARNING and an audit entry
   * saying why; nothing when another worker or instance paused it first (the update only from `active`).
   */
  private async pauseBySystem(rollout: Rollout, reason: string, o: { action: string; warning: string; log: Record<string, unknown>; details: Record<string, unknown> }): Promise<void> {
    const { version } = rollout;
    const track: ReleaseTrack = { class: rollout.class, productHex: rollout.productHex, application: rollout.application };
    const at = this.iso();
    const paused = await this.store.updateRollout(track, version, { state: 'paused', percent: effectivePercent(rollout, this.now()), anchorAtMs: this.now(), pausedReason: reason, updatedAt: at }, 'active');
    if (!paused) return;
    await this.ota.changed(track);
    this.log.warning(o.warning, { class: track.class, product_hex: track.productHex, application: track.application, version, ...o.log });
    await this.store.appendAudit({
      at,
      actor: 'system',
      via: 'system',
      action: o.action,
      method: '-',
      path: `/admin/firmware/${track.class}/${track.productHex}/${track.application}/${version}/rollout`,
      status: 200,
      details: { reason, ...o.details },
    });
  }

  view(r: Rollout, outcomes: OutcomeCounts): RolloutView {
    return {
      class: r.class,
      product_hex: r.productHex,
      application: r.application,
      version: r.version,
      state: r.state,
      percent: r.percent,
      effective_percent: effectivePercent(r, this.now()),
      next_step: ((n) => (n ? { at: new Date(n.atMs).toISOString(), percent: n.percent } : null))(nextStep(r, this.now())),
      groups: r.groups,
      step_percent: r.stepPercent,
      step_every_seconds: r.stepEverySeconds,
      error_threshold_percent: r.errorThresholdPercent,
      min_reports: r.minReports,
      health_margin: r.healthMargin,
      health_min_device_hours: r.healthMinDeviceHours,
      paused_reason: r.pausedReason,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
      outcomes,
    };
  }
}

/** Which key signed a release's image, with the label the track's signing setting gives that key now. */
export function signedByView(r: FirmwareRelease, signing: TrackSigning | null): Static<typeof SignedBy> | null {
  if (!r.signedBy) return null;
  const label = signing?.keys.find((k) => k.digest === r.signedBy!.keyDigest)?.label;
  return { block: r.signedBy.block, key_digest: r.signedBy.keyDigest, ...(label === undefined ? {} : { key_label: label }) };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
