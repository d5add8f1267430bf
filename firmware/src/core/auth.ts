// The configurator's visual-token (DESIGN.md section 5, docs/firmware-visual-token.md): POST /api/login
// with the controller's admin password answers a random token with a sliding expiry. The password
// is kept only as HMAC(fuse key, label || password), so a dump of the flash does not reveal it and
// cannot be attacked offline without the chip. Failed logins (and failed provisioning token
// exchanges) are throttled by FailureThrottle (docs/firmware-login-throttle.md).
import type { Hal } from '../hal/index.ts';
import { concatBytes, constantTimeEqual, hexEncode, utf8Encode } from './bytes.ts';
import { errors } from './errors.ts';

const PASSWORD_PATH = '/config/admin-password';
const PASSWORD_LABEL = utf8Encode('admin-password-v1\u0000');
const MAX_TOKENS = 8;

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

export class VisualTokens {
  private readonly tokens = new Map<string, number>();
  /** Failed logins (docs/firmware-login-throttle.md); the API refuses attempts while it says so. */
  readonly throttle: FailureThrottle;

  constructor(
    private readonly hal: Hal,
    private readonly ttlMs: number,
    log: (level: 'info' | 'warning' | 'error', message: string) => void = () => undefined,
  ) {
    this.throttle = new FailureThrottle('login', () => hal.clock.uptime(), log);
  }

  /** Sets the admin password (factory set-up, the serial console). */
  setPassword(password: string): void {
    if (password.length < 8 || password.length > 128) throw errors.badRequest('invalid_password', 'The password must be 8 to 128 characters');
    const f = this.hal.storage.create(`${PASSWORD_PATH}.tmp`);
    f.write(this.digest(password));
    f.close();
    this.hal.storage.rename(`${PASSWORD_PATH}.tmp`, PASSWORD_PATH);
    this.tokens.clear();
    this.throttle.reset();
  }

  hasPassword(): boolean {
    return this.hal.storage.size(PASSWORD_PATH) === 32;
  }

  login(password: unknown): { token: string; expires_in: number } {
    if (typeof password !== 'string' || !this.hasPassword()) throw errors.unauthorized('invalid_password', 'The password is not valid');
    const stored = this.hal.storage.read(PASSWORD_PATH, 0, 32);
    if (!constantTimeEqual(stored, this.digest(password))) throw errors.unauthorized('invalid_password', 'The password is not valid');
    if (this.tokens.size >= MAX_TOKENS) {
      // Forget the token closest to expiry.
      let oldest: string | undefined;
      for (const [t, exp] of this.tokens) if (oldest === undefined || exp < this.tokens.get(oldest)!) oldest = t;
      if (oldest !== undefined) this.tokens.delete(oldest);
    }
    const token = hexEncode(this.hal.crypto.randomBytes(16));
    this.tokens.set(token, this.hal.clock.uptime() + this.ttlMs);
    return { token, expires_in: Math.round(this.ttlMs / 1000) };
  }

  /** Throws 401 unless `presented` is a live token; slides its expiry. Constant time over tokens. */
  check(presented: string | undefined): void {
    if (presented === undefined || presented === '') throw errors.unauthorized('missing_visual_token', 'A visual-token header is required');
    const candidate = utf8Encode(presented);
    let match: string | undefined;
    for (const t of this.tokens.keys()) if (constantTimeEqual(utf8Encode(t), candidate)) match = t;
    const nowMs = this.hal.clock.uptime();
    if (match === undefined || this.tokens.get(match)! <= nowMs) {
      if (match !== undefined) this.tokens.delete(match);
      throw errors.unauthorized('invalid_visual_token', 'The visual-token is not valid or has expired');
    }
    this.tokens.set(match, nowMs + this.ttlMs);
  }

  private digest(password: string): Uint8Array {
    return this.hal.fuse.hmac(concatBytes(PASSWORD_LABEL, utf8Encode(password)));
  }
}
