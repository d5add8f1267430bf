// The reports a board has made and the cloud has not taken yet, in a small ring on flash
// (docs/device-health.md, "On the board"): one file per report, `/health/<10-digit seq>`, each
// written atomically, as the event log's entries are (a power cut loses at most the report being
// written, never leaves half of one). When the ring is full the oldest report goes to make room, and
// the count of reports dropped so far goes out with the next boot report and heartbeat.
// The board's health state beside it (`/health/state`, written atomically): the next report's
// number, the reports dropped, the boots counted, the rolled-back image last seen, the heartbeat's
// interval, the boots at the last heartbeat. A new flash starts its numbers at a random point, so that a board whose flash was erased
// never repeats a number the cloud already holds for it (the cloud keeps one report per number).
import type { CryptoHal } from '../../hal/crypto.ts';
import type { Storage } from '../../hal/storage.ts';
import { utf8Decode, utf8Encode } from '../bytes.ts';
import { HEALTH_FOLDER, writeFileAtomically } from '../flash.ts';
import { parseJson } from '../json-validator.ts';
import { encodeReport, type HealthReport } from './reports.ts';

/** Reports kept while the cloud cannot be reached: a day of hourly heartbeats, a few boots and an update. */
export const RING_CAPACITY = 32;
export const DEFAULT_HEARTBEAT_SECONDS = 3600;
export const MIN_HEARTBEAT_SECONDS = 300;
export const MAX_HEARTBEAT_SECONDS = 86_400;

const STATE_PATH = `${HEALTH_FOLDER}/state`;
const MAX_STATE_BYTES = 1024;

export interface HealthState {
  nextSeq: number;
  dropped: number;
  boots: number;
  /** `boots` at the last heartbeat: the next one reports the boots since. */
  heartbeatBoots: number;
  /** "<slot> <version>" of the last rolled-back image the board has reported, or null. */
  invalidSeen: string | null;
  heartbeatSeconds: number;
}

export interface StoredReport {
  seq: number;
  bytes: Uint8Array;
}

export class HealthRing {
  private state: HealthState | null = null;

  constructor(
    private readonly storage: Storage,
    private readonly crypto: Pick<CryptoHal, 'randomBytes'>,
    private readonly capacity = RING_CAPACITY,
  ) {}

  /** The health state, read once (or begun, on a new flash). */
  current(): HealthState {
    this.state ??= this.read() ?? this.begin();
    return this.state;
  }

  update(change: Partial<HealthState>): HealthState {
    const next = { ...this.current(), ...change };
    writeFileAtomically(this.storage, STATE_PATH, utf8Encode(JSON.stringify(next)));
    this.state = next;
    return next;
  }

  /** Takes the next number for a report the caller is making. */
  nextSeq(): number {
    const seq = this.current().nextSeq;
    this.update({ nextSeq: seq + 1 });
    return seq;
  }

  /** Keeps a report; the oldest go when the ring is full (counted in `dropped`). */
  append(report: HealthReport): void {
    writeFileAtomically(this.storage, pathOf(report.seq), encodeReport(report));
    const kept = this.seqs();
    const over = kept.length - this.capacity;
    for (let i = 0; i < over; i++) this.storage.remove(pathOf(kept[i]!));
    if (over > 0) this.update({ dropped: this.current().dropped + over });
  }

  /** The oldest report kept, or null. */
  oldest(): StoredReport | null {
    for (const seq of this.seqs()) {
      const size = this.storage.size(pathOf(seq));
      if (size !== null && size > 0) return { seq, bytes: this.storage.read(pathOf(seq), 0, size) };
      this.storage.remove(pathOf(seq)); // an empty file: never a report
    }
    return null;
  }

  /** The cloud took it (or will never take it: `dropped`). */
  remove(seq: number, dropped = false): void {
    this.storage.remove(pathOf(seq));
    if (dropped) this.update({ dropped: this.current().dropped + 1 });
  }

  size(): number {
    return this.seqs().length;
  }

  private seqs(): number[] {
    return this.storage
      .list(HEALTH_FOLDER)
      .map((p) => p.slice(HEALTH_FOLDER.length + 1))
      .filter((n) => n.length === 10 && /^\d+$/.test(n)) // not a module-level RegExp: docs/moddable-regexp.md
      .sort()
      .map(Number);
  }

  private read(): HealthState | null {
    const size = this.storage.size(STATE_PATH);
    if (size === null || size > MAX_STATE_BYTES) return null;
    try {
      const v = parseJson(utf8Decode(this.storage.read(STATE_PATH, 0, size))) as Partial<HealthState>;
      if (!Number.isInteger(v.nextSeq) || !Number.isInteger(v.dropped) || !Number.isInteger(v.boots)) return null;
      return {
        nextSeq: v.nextSeq!,
        dropped: v.dropped!,
        boots: v.boots!,
        heartbeatBoots: Number.isInteger(v.heartbeatBoots) ? v.heartbeatBoots! : v.boots!,
        invalidSeen: typeof v.invalidSeen === 'string' ? v.invalidSeen : null,
        heartbeatSeconds: validHeartbeat(v.heartbeatSeconds) ? v.heartbeatSeconds : DEFAULT_HEARTBEAT_SECONDS,
      };
    } catch {
      return null;
    }
  }

  private begin(): HealthState {
    const r = this.crypto.randomBytes(4);
    // 1 to 2^30: room below the ten digits of a name for a board's whole life.
    const start = (((r[0]! << 22) | (r[1]! << 14) | (r[2]! << 6) | (r[3]! >> 2)) >>> 0) % 0x40000000;
    const state: HealthState = { nextSeq: start + 1, dropped: 0, boots: 0, heartbeatBoots: 0, invalidSeen: null, heartbeatSeconds: DEFAULT_HEARTBEAT_SECONDS };
    writeFileAtomically(this.storage, STATE_PATH, utf8Encode(JSON.stringify(state)));
    return state;
  }
}

export function validHeartbeat(seconds: unknown): seconds is number {
  return Number.isInteger(seconds) && (seconds as number) >= MIN_HEARTBEAT_SECONDS && (seconds as number) <= MAX_HEARTBEAT_SECONDS;
}

function pathOf(seq: number): string {
  return `${HEALTH_FOLDER}/${String(seq).padStart(10, '0')}`;
}
