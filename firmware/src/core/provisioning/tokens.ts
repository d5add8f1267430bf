// Provisioning tokens (spec 2.4, 3.3): bearer tokens bound to the MAC submitted in the exchange, one
// active per MAC (a new one invalidates the old), sliding expiry reset on each authenticated request.
import type { CryptoHal } from '../../hal/crypto.ts';
import { constantTimeEqual, hexEncode, utf8Encode } from '../bytes.ts';
import { errors } from '../errors.ts';
import type { RecordKind } from '../records.ts';

/**
 * The event-log line of a token issued (spec 3.5 step 4): the moment a client or a target takes its
 * record. Written by the API (api.ts); the configurator finds a client's by it (docs/configurator-clients.md).
 */
export function tokenIssuedMessage(mac: string, kind: RecordKind, uuid: string): string {
  return `provisioning token issued to ${mac} (${kind.slice(0, -1)} ${uuid})`;
}

export interface ProvisioningToken {
  mac: string;
  uuid: string;
  kind: RecordKind;
  token: string;
  expiresAtMs: number;
}

export class ProvisioningTokens {
  private readonly byMac = new Map<string, ProvisioningToken>();

  constructor(
    private readonly crypto: CryptoHal,
    private readonly now: () => number,
    private readonly ttlMs: number,
  ) {}

  /** Issues a token for a MAC; any earlier token for that MAC stops working. */
  issue(mac: string, uuid: string, kind: RecordKind): ProvisioningToken {
    const token: ProvisioningToken = {
      mac,
      uuid,
      kind,
      token: hexEncode(this.crypto.randomBytes(16)),
      expiresAtMs: this.now() + this.ttlMs,
    };
    this.byMac.set(mac, token);
    return token;
  }

  /**
   * Checks a presented token in constant time against every active one (no early exit), refuses an
   * expired one, and slides the expiry of a valid one. `stationMac`, when the platform knows which
   * station sent the request, must be the MAC the token is bound to.
   */
  authenticate(presented: string, stationMac: string | undefined): ProvisioningToken {
    const candidate = utf8Encode(presented);
    let match: ProvisioningToken | undefined;
    for (const t of this.byMac.values()) {
      if (constantTimeEqual(utf8Encode(t.token), candidate)) match = t;
    }
    if (!match) throw errors.unauthorized('invalid_provisioning_token', 'The provisioning token is not valid');
    const nowMs = this.now();
    if (nowMs >= match.expiresAtMs) {
      this.byMac.delete(match.mac);
      throw errors.unauthorized('provisioning_token_expired', 'The provisioning token has expired');
    }
    if (stationMac !== undefined && stationMac !== match.mac) {
      throw errors.forbidden('provisioning_token_wrong_station', 'The provisioning token belongs to another station');
    }
    match.expiresAtMs = nowMs + this.ttlMs;
    return match;
  }

  active(): number {
    return this.byMac.size;
  }

  clear(): void {
    this.byMac.clear();
  }
}
