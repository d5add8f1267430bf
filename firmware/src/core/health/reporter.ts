// A board's own health reports (docs/device-health.md): a boot report after every boot, a heartbeat
// every heartbeatSeconds, and the steps and end of every update. Each is kept in the ring on flash
// (ring.ts) first, then sent to the cloud oldest first, signed as backups are, whenever the cloud is
// configured and the clock set; what the cloud does not take now waits for the next try (a back-off
// from 30 s up to the heartbeat's interval). An update names itself in a marker on flash until its end is
// reported, so that no update ends silently: a board that loses power half way reports `interrupted`
// at its next boot, and one whose new image never came up reports `rolled_back`. While an update's
// image downloads, nothing is sent: the chip's heap holds one download's exchange, not two (the
// reports wait in the ring, power-cut safe, and go when the update is installed or has failed).
import type { Hal } from '../../hal/index.ts';
import { utf8Decode, utf8Encode } from '../bytes.ts';
import { drain } from '../body.ts';
import { readCloudConfig } from '../cloud/config.ts';
import { signatureHeaders } from '../cloud/device-signature.ts';
import { HEALTH_FOLDER, writeFileAtomically } from '../flash.ts';
import { parseJson } from '../json-validator.ts';
import type { UpdateFailure, UpdateStep } from './outcomes.ts';
import { boundedCrash, boundedDetail, common, count, type BootReport, type HealthReport, type HeartbeatReport, type UpdateReport } from './reports.ts';
import { HealthRing, validHeartbeat, MIN_HEARTBEAT_SECONDS, MAX_HEARTBEAT_SECONDS } from './ring.ts';

const MARKER_PATH = `${HEALTH_FOLDER}/update`;
const REQUEST_TIMEOUT_MS = 15_000;
/** The first try after boot, and the back-off's start (it doubles up to the heartbeat's interval). */
const FIRST_SEND_MS = 2_000;
const RETRY_MS = 30_000;
/** How often to look again for a clock set by SNTP. */
const CLOCK_WAIT_MS = 5_000;

type Log = (level: 'info' | 'warning' | 'error', message: string) => void;

interface UpdateMarker {
  version: string;
  step: UpdateStep | 'installed';
}

export class HealthReporter {
  readonly ring: HealthRing;
  private heartbeatTimer: number | undefined;
  private sendTimer: number | undefined;
  private retryMs = RETRY_MS;
  private sending = false;
  /** An update's image is downloading: reports wait until it is installed or has failed. */
  private downloading = false;
  /** What the cloud last answered, for the console: a status, or why it could not be reached. */
  lastAnswer: string | null = null;

  constructor(
    private readonly hal: Hal,
    private readonly identityKey: Uint8Array,
    private readonly log: Log,
  ) {
    this.ring = new HealthRing(hal.storage, hal.crypto);
  }

  /** At every boot, once the flash is repaired: the boot report, the end of an update that was under way, the heartbeat's timer. */
  boot(): void {
    const hal = this.hal;
    const state = this.ring.current();
    const boots = state.boots + 1;
    const last = hal.system.lastRun();
    const running = hal.system.runningApp();
    const invalid = hal.system.lastInvalidApp();
    const invalidNow = invalid ? `${invalid.partition} ${invalid.version}` : null;
    const report: BootReport = {
      kind: 'boot',
      ...common(hal, this.ring.nextSeq()),
      reason: last.reason,
      ...(last.by !== undefined ? { by: last.by.slice(0, 64) } : {}),
      ...(last.crash ? { crash: boundedCrash(last.crash) } : {}),
      slot: running.partition,
      ota: running.state,
      // A rollback the board has not reported yet (esp_ota_get_last_invalid_partition changed).
      ...(invalid && invalidNow !== state.invalidSeen ? { rolled_back: { slot: invalid.partition, version: invalid.version } } : {}),
      sv: running.secureVersion,
      boots,
      dropped: state.dropped,
    };
    this.ring.update({ boots, invalidSeen: invalidNow });
    this.keep(report);
    this.settleUpdate();
    this.scheduleHeartbeat();
    this.sendSoon(FIRST_SEND_MS);
  }

  /** The running image has confirmed itself (or was confirmed): an update that brought it has succeeded. */
  confirmed(): void {
    const marker = this.marker();
    const running = this.hal.system.runningApp();
    if (marker && running.version === marker.version && running.state !== 'pending_verify') this.endUpdate(marker.version, 'succeeded');
  }

  /** A step of an update (`downloading`, `installing`): kept in the marker and reported. */
  updateStep(version: string, step: UpdateStep): void {
    this.writeMarker({ version, step });
    this.keep(this.updateReport(version, step));
    this.downloading = step === 'downloading';
    this.sendSoon(0);
  }

  /** The image is in the passive slot and selected: the next boot tells how it ends. */
  updateInstalled(version: string): void {
    this.writeMarker({ version, step: 'installed' });
    this.downloading = false;
    this.sendSoon(0);
  }

  updateFailed(version: string, reason: UpdateFailure, detail: string): void {
    this.endUpdate(version, 'failed', reason, detail);
  }

  /** A heartbeat now (the timer's, or `health now` on the console). */
  heartbeat(): HeartbeatReport {
    const hal = this.hal;
    const state = this.ring.current();
    const heap = hal.system.heapReport();
    const report: HeartbeatReport = {
      kind: 'heartbeat',
      ...common(hal, this.ring.nextSeq()),
      chunk: heap.chunk,
      chunk_peak: heap.chunkPeak,
      slots: heap.slots,
      slots_peak: heap.slotsPeak,
      block: heap.largestFreeBlock,
      heap_min: heap.minFreeHeap,
      rssi: hal.radio.stationRssi(),
      reboots: count(state.boots - state.heartbeatBoots),
      ota: hal.system.runningApp().state,
      dropped: count(state.dropped),
    };
    this.ring.update({ heartbeatBoots: state.boots });
    this.keep(report);
    this.sendSoon(0);
    return report;
  }

  setHeartbeatSeconds(seconds: number): void {
    if (!validHeartbeat(seconds)) throw Object.assign(new Error(`the heartbeat's interval is ${MIN_HEARTBEAT_SECONDS} to ${MAX_HEARTBEAT_SECONDS} seconds, not ${seconds}`), { code: 'bad_interval' });
    this.ring.update({ heartbeatSeconds: seconds });
    this.scheduleHeartbeat();
  }

  status(): Record<string, unknown> {
    const state = this.ring.current();
    return { waiting: this.ring.size(), dropped: state.dropped, next_seq: state.nextSeq, boots: state.boots, heartbeat_seconds: state.heartbeatSeconds, update: this.marker(), last_answer: this.lastAnswer };
  }

  stop(): void {
    if (this.heartbeatTimer !== undefined) this.hal.timers.clearTimeout(this.heartbeatTimer);
    if (this.sendTimer !== undefined) this.hal.timers.clearTimeout(this.sendTimer);
    this.heartbeatTimer = this.sendTimer = undefined;
  }

  /** Sends what waits, oldest first, until the ring is empty or the cloud does not take one. */
  async send(): Promise<void> {
    if (this.sending || this.downloading) return;
    this.sending = true;
    try {
      for (;;) {
        const report = this.ring.oldest();
        if (!report) {
          this.retryMs = RETRY_MS;
          return;
        }
        const base = readCloudConfig(this.hal.storage)?.url;
        // No cloud yet: what waits goes when one is configured (the console's `cloud`) or with the next heartbeat.
        if (!base) return;
        // Signed with the board's time: not before the clock is set, which SNTP does soon after an address.
        if (!this.hal.clock.synchronized()) return this.sendSoon(CLOCK_WAIT_MS);
        if (this.downloading) return;
        const status = await this.post(base, report.bytes);
        if (status === 200 || status === 201) {
          this.ring.remove(report.seq);
          continue;
        }
        if (status === 400 || status === 413) {
          // The cloud will never take it (it says why in its answer): the next one goes on.
          this.log('warning', `health report ${report.seq} refused by the cloud (${status}): dropped`);
          this.ring.remove(report.seq, true);
          continue;
        }
        this.backOff();
        return;
      }
    } finally {
      this.sending = false;
    }
  }

  private async post(base: string, bytes: Uint8Array): Promise<number | null> {
    const uuid = this.hal.system.identity().uuid;
    try {
      const res = await this.hal.network.request({
        method: 'POST',
        url: `${base}/devices/${encodeURIComponent(uuid)}/health`,
        headers: { ...signatureHeaders(this.hal, this.identityKey, uuid), 'content-type': 'application/json' },
        body: bytes,
        bodyLength: bytes.length,
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      await drain(res.body);
      this.lastAnswer = String(res.status);
      return res.status;
    } catch (err) {
      this.lastAnswer = `unreachable: ${err instanceof Error ? err.message : String(err)}`;
      return null;
    }
  }

  private keep(report: HealthReport): void {
    try {
      this.ring.append(report);
    } catch (err) {
      // The flash refused it (full): the report is lost, the board goes on.
      this.log('warning', `health report ${report.seq} not kept: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private updateReport(version: string, outcome: UpdateReport['outcome'], reason?: UpdateFailure, detail?: string): UpdateReport {
    return { kind: 'update', ...common(this.hal, this.ring.nextSeq()), version, outcome, ...(reason ? { reason } : {}), ...(detail !== undefined ? { detail: boundedDetail(detail) } : {}) };
  }

  private endUpdate(version: string, outcome: 'succeeded' | 'failed', reason?: UpdateFailure, detail?: string): void {
    this.downloading = false;
    this.keep(this.updateReport(version, outcome, reason, detail));
    this.hal.storage.remove(MARKER_PATH);
    this.sendSoon(0);
  }

  /** At boot: how an update that was under way ended (docs/device-health.md, "update"). */
  private settleUpdate(): void {
    const marker = this.marker();
    if (!marker) return;
    const running = this.hal.system.runningApp();
    const invalid = this.hal.system.lastInvalidApp();
    if (running.version === marker.version) {
      if (running.state !== 'pending_verify') this.endUpdate(marker.version, 'succeeded');
      return; // up, not confirmed yet: confirmed() ends it, or the next boot finds it rolled back
    }
    if (marker.step === 'installed' && invalid?.version === marker.version) {
      this.endUpdate(marker.version, 'failed', 'rolled_back', `${marker.version} in ${invalid.partition} did not come up; the bootloader went back to ${running.partition} (${running.version})`);
    } else this.endUpdate(marker.version, 'failed', 'interrupted', `the board reset while ${marker.step === 'installed' ? 'rebooting into it' : marker.step}`);
  }

  private marker(): UpdateMarker | null {
    const size = this.hal.storage.size(MARKER_PATH);
    if (size === null || size > 256) return null;
    try {
      const v = parseJson(utf8Decode(this.hal.storage.read(MARKER_PATH, 0, size))) as Partial<UpdateMarker>;
      return typeof v.version === 'string' && typeof v.step === 'string' ? { version: v.version, step: v.step } : null;
    } catch {
      return null;
    }
  }

  private writeMarker(marker: UpdateMarker): void {
    writeFileAtomically(this.hal.storage, MARKER_PATH, utf8Encode(JSON.stringify(marker)));
  }

  private scheduleHeartbeat(): void {
    if (this.heartbeatTimer !== undefined) this.hal.timers.clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = this.hal.timers.setTimeout(() => {
      this.heartbeatTimer = undefined;
      this.heartbeat();
      this.scheduleHeartbeat();
    }, this.ring.current().heartbeatSeconds * 1000);
  }

  private sendSoon(ms: number): void {
    if (this.sendTimer !== undefined) this.hal.timers.clearTimeout(this.sendTimer);
    this.sendTimer = this.hal.timers.setTimeout(() => {
      this.sendTimer = undefined;
      void this.send();
    }, ms);
  }

  private backOff(): void {
    this.sendSoon(this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, this.ring.current().heartbeatSeconds * 1000);
  }
}
