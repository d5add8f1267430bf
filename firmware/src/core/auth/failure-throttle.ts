// The failure throttle (docs/firmware-login-throttle.md): consecutive failed attempts at one door,
// POST /api/login (visual-token.ts) or the provisioning token exchange (spec 5.2; provisioning/mode.ts),
// and the back-off they earn.

/** The numbers of docs/firmware-login-throttle.md. */
export interface ThrottlePolicy {
  /** Consecutive failures answered at once (a person mistyping). */
  freeFailures: number;
  /** The wait after failure number `freeFailures`; it doubles with each further failure... */
  firstDelayMs: number;
  /** ...up to this. */
  maxDelayMs: number;
  /** From this many consecutive failures on, a lockout (Matter: 20)... */
  lockoutAfter: number;
  /** ...of this long, doubling with each further failure... */
  lockoutMs: number;
  /** ...up to this. */
  maxLockoutMs: number;
  /** At this many consecutive failures the door stays shut until reset() (NIST SP 800-63B: at most 100). */
  hardLimit: number;
}

export const DEFAULT_THROTTLE: Readonly<ThrottlePolicy> = Object.freeze({
  freeFailures: 5,
  firstDelayMs: 1_000,
  maxDelayMs: 60_000,
  lockoutAfter: 20,
  lockoutMs: 15 * 60_000,
  maxLockoutMs: 24 * 3_600_000,
  hardLimit: 100,
});

/**
 * Consecutive failed attempts at one door (the login, the token exchange) and the back-off they
 * earn. Nothing sleeps: while a back-off is in force, attempts are refused (429 with Retry-After)
 * without being checked, and the board goes on serving everything else. Refused attempts neither
 * count nor extend the back-off, so hammering during a lockout does not prolong it. State is in RAM:
 * a restart (physical access or the admin) clears it. Time is the HAL clock; a clock that jumps
 * backwards never makes a back-off longer than its own length.
 */
export class FailureThrottle {
  private failures = 0;
  private refused = 0;
  private blockedUntil = 0;

  constructor(
    private readonly name: string,
    private readonly now: () => number,
    private readonly log: (level: 'info' | 'warning' | 'error', message: string) => void,
    readonly policy: ThrottlePolicy = DEFAULT_THROTTLE,
  ) {}

  /** How long the back-off after `failures` consecutive failures lasts (Infinity: until reset()). */
  windowMs(failures: number): number {
    const p = this.policy;
    if (failures < p.freeFailures) return 0;
    if (failures < p.lockoutAfter) return Math.min(p.firstDelayMs * 2 ** (failures - p.freeFailures), p.maxDelayMs);
    if (failures < p.hardLimit) return Math.min(p.lockoutMs * 2 ** (failures - p.lockoutAfter), p.maxLockoutMs);
    return Infinity;
  }

  /**
   * Null when an attempt may be checked now; otherwise the milliseconds until it may (Infinity
   * after the hard limit). A refusal is counted for the log, not as a failure.
   */
  retryAfterMs(): number | null {
    if (this.failures >= this.policy.hardLimit) {
      this.refused++;
      return Infinity;
    }
    const now = this.now();
    const window = this.windowMs(this.failures);
    if (this.blockedUntil - now > window) this.blockedUntil = now + window;
    if (now >= this.blockedUntil) return null;
    this.refused++;
    return this.blockedUntil - now;
  }

  /** A checked attempt failed: count it and start the back-off it earns. */
  failed(): void {
    const p = this.policy;
    this.failures++;
    const window = this.windowMs(this.failures);
    this.blockedUntil = window === Infinity ? Infinity : this.now() + window;
    if (this.failures === p.freeFailures) {
      this.log('warning', `${this.name}: ${this.failures} failed attempts in a row; further attempts wait ${window / 1000} s, doubling up to ${p.maxDelayMs / 1000} s`);
    } else if (this.failures === p.hardLimit) {
      this.log('error', `${this.name} locked after ${this.failures} failed attempts in a row, until the admin password is set again on the serial console`);
    } else if (this.failures >= p.lockoutAfter) {
      this.log('warning', `${this.name} locked for ${Math.round(window / 1000)} s after ${this.failures} failed attempts in a row`);
    }
  }

  /** A checked attempt succeeded: the count starts again. */
  succeeded(): void {
    if (this.failures >= this.policy.freeFailures) {
      this.log('info', `${this.name} succeeded after ${this.failures} failed attempts in a row (${this.refused} refused while waiting)`);
    }
    this.clear();
  }

  /** Forgets every failure (a new admin password; a new provisioning session). */
  reset(): void {
    this.clear();
  }

  failedAttempts(): number {
    return this.failures;
  }

  private clear(): void {
    this.failures = 0;
    this.refused = 0;
    this.blockedUntil = 0;
  }
}
