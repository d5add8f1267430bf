// The configurator's visual-token (spec 5: /api/cloud-backup needs one; DESIGN.md section 5,
// docs/firmware-visual-token.md): POST /api/login with the controller's admin password answers a
// random token with a sliding expiry. The password is kept only as HMAC(fuse key, label || password),
// so a dump of the flash does not reveal it and cannot be attacked offline without the chip. Failed
// logins (and failed provisioning token exchanges) are throttled by FailureThrottle
// (failure-throttle.ts, docs/firmware-login-throttle.md).
import type { Hal } from '../../hal/index.ts';
import { concatBytes, constantTimeEqual, hexEncode, utf8Encode } from '../bytes.ts';
import { errors } from '../errors.ts';
import { FailureThrottle } from './failure-throttle.ts';

export const PASSWORD_PATH = '/config/admin-password';
const PASSWORD_LABEL = utf8Encode('admin-password-v1\u0000');
const MAX_TOKENS = 8;

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
