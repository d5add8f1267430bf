// Device health in the cloud (docs/device-health.md): a device's report stored (once per seq), and when
// it was an unexpected reboot, the health gate of the rollout of the release it was counted against
// judged at once (ReleaseService.pauseOnHealth); and what the admin API shows: a device's timeline, a
// release's health against the previous release and its rollout's gate, the fleet's.
import { ApiError } from '../errors.ts';
import type { FunctionLogger } from '../logging.ts';
import type { ReleaseService } from '../ota/releases.ts';
import { healthGate } from '../ota/rollout.ts';
import type { Static } from '@sinclair/typebox';
import type { DeviceHealthTimeline, FleetHealth, ReleaseHealth } from '../schema/health.ts';
import type { CloudStore, HealthIngest, HealthReport, ReleaseTrack } from '../store/types.ts';
import { dayOf, unexpectedOf } from '../health-definitions.ts';
import { deviceHealthView, healthDayView, releaseHealthView } from './views.ts';

const DAY_MS = 86_400_000;

export class HealthService {
  constructor(
    private readonly store: CloudStore,
    private readonly releases: ReleaseService,
    private readonly log: FunctionLogger,
    private readonly now: () => number,
  ) {}

  /** Stores a device's report (the device is authenticated); an unknown device (removed meanwhile) is 401. */
  async ingest(uuid: string, report: HealthReport): Promise<HealthIngest> {
    const ingest = await this.store.putHealthReport(uuid, report, new Date(this.now()).toISOString());
    if (!ingest) throw new ApiError('unknown_device');
    if (!ingest.stored) {
      this.log.debug('health report stored before', { uuid, seq: report.seq });
      return ingest;
    }
    if (ingest.unexpectedOn !== null && report.kind === 'boot') {
      this.log.info('unexpected reboot', { uuid, reason: report.reason, version: ingest.unexpectedOn, crash: report.crash?.kind });
      // The report is stored whatever happens here: a gate that cannot be judged now is judged at the next one.
      await this.judge(uuid, ingest.unexpectedOn).catch((err: unknown) =>
        this.log.error('health gate not judged', { uuid, version: ingest.unexpectedOn, error: err instanceof Error ? err.message : String(err) }),
      );
    }
    return ingest;
  }

  /** The device counts for the track of its last update check (docs/device-health.md). */
  private async judge(uuid: string, version: string): Promise<void> {
    const [device] = await this.store.listInventory({ uuid, limit: 1 });
    if (device?.lastCheck) await this.releases.pauseOnHealth(device.lastCheck.track, version);
  }

  /** A device's health: its state, its reports newest first (paged by seq), its daily aggregates. */
  async timeline(uuid: string, o: { limit: number; before?: number; days: number }): Promise<Static<typeof DeviceHealthTimeline>> {
    const [device] = await this.store.listInventory({ uuid, limit: 1 });
    if (!device) throw new ApiError('device_not_found');
    const sinceDay = dayOf(new Date(this.now() - (o.days - 1) * DAY_MS).toISOString());
    const [reports, days] = await Promise.all([
      this.store.listHealthReports(uuid, { limit: o.limit, ...(o.before !== undefined ? { beforeSeq: o.before } : {}) }),
      this.store.listHealthDays(uuid, { sinceDay }),
    ]);
    return {
      uuid,
      health: deviceHealthView(device.health),
      reports: reports.map((r) => ({ received_at: r.receivedAt, report: r.report })),
      next_before: reports.length === o.limit ? reports.at(-1)!.report.seq : null,
      days: days.map(healthDayView),
    };
  }

  /** A release's health, the previous RELEASED version's beside it, and its rollout's health gate. */
  async release(track: ReleaseTrack, version: string): Promise<Static<typeof ReleaseHealth>> {
    const [releases, rollouts] = await Promise.all([this.store.listReleases(track), this.store.listRollouts(track)]);
    if (!releases.some((r) => r.version === version)) throw new ApiError('release_not_found', { version });
    const previous = releases.filter((r) => r.status === 'RELEASED' && r.version < version).at(-1)?.version;
    const figures = await this.store.releaseHealth({ track, versions: previous ? [version, previous] : [version] });
    const of = (v: string) => figures.find((f) => f.version === v)!;
    const current = of(version);
    const before = previous ? of(previous) : null;
    const rollout = rollouts.find((r) => r.version === version);
    const sample = (f: typeof current) => ({ version: f.version, unexpected: unexpectedOf(f.reboots), deviceSeconds: f.deviceSeconds });
    const verdict = rollout && healthGate(rollout, sample(current), before && sample(before));
    return {
      ...releaseHealthView(current),
      previous: before && releaseHealthView(before),
      gate:
        rollout && verdict
          ? { state: rollout.state, health_margin: rollout.healthMargin, health_min_device_hours: rollout.healthMinDeviceHours, judging: verdict.judging, over: verdict.over, paused_reason: rollout.pausedReason }
          : null,
    };
  }

  /** The fleet: devices reporting, crashed in the window, low on heap, reports dropped; health by release. */
  async fleet({ crashedDays, lowHeapBytes }: { crashedDays: number; lowHeapBytes: number }): Promise<Static<typeof FleetHealth>> {
    const [totals, releases] = await Promise.all([
      this.store.healthTotals({ crashedSince: new Date(this.now() - crashedDays * DAY_MS).toISOString(), lowHeapBelow: lowHeapBytes }),
      this.store.releaseHealth({}),
    ]);
    return {
      devices: totals.devices,
      reporting: totals.reporting,
      crashed: totals.crashed,
      low_heap: totals.lowHeap,
      dropped: totals.dropped,
      crashed_days: crashedDays,
      low_heap_bytes: lowHeapBytes,
      releases: releases.map(releaseHealthView),
    };
  }
}
