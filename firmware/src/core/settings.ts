// Compile-time settings of the firmware (spec 8). A platform's build passes overrides (on Moddable
// through the manifest's config, on a virtual board through the bundle's defines).
import type { BuildKind } from '../hal/system.ts';
import { FFCE_MIN_BYTES, MAX_CLOUD_BLOB_BYTES } from './crypto/ffce.ts';

export interface FirmwareSettings {
  /** PROVISIONING_MODE_TTL: provisioning mode lifetime (spec 3.2, 8). */
  provisioningModeTtlSeconds: number;
  /**
   * PROVISIONING_TOKEN_TTL: a provisioning token's sliding lifetime (spec 2.4). Defaults to
   * PROVISIONING_MODE_TTL, as spec 8 gives both the same value; its own setting so that a build (or a
   * test) can make tokens expire while the mode is still on (docs/firmware-api.md).
   */
  provisioningTokenTtlSeconds: number;
  /** CLOUD_BACKUP_INTERVAL_SECONDS (spec 8). */
  cloudBackupIntervalSeconds: number;
  /** The first automatic backup runs this long after boot (spec 8: 30 s). */
  cloudBackupFirstDelaySeconds: number;
  /** Spec 3.6 step 2. */
  targetConnectTimeoutMs: number;
  /** Spec 3.6 step 8. */
  resultDisplayMs: number;
  /** Spec 3.2 / 8: about 2 dBm. */
  provisioningTxPowerDbm: number;
  /** The lowest TX power a station uses to associate for provisioning (spec 3.5 step 3). */
  minimumTxPowerDbm: number;
  /** Local backup limit: 512 KB less the FFCE framing, so the blob always fits (DESIGN.md section 4). */
  maxLocalBackupBytes: number;
  /** Size of the chunks streamed to and from flash and the network. */
  chunkBytes: number;
  /** Largest controller/client record accepted, in bytes. */
  maxRecordBytes: number;
  /** Visual-token lifetime, sliding. */
  visualTokenTtlSeconds: number;
}

export function defaultSettings(build: BuildKind, overrides: Partial<FirmwareSettings> = {}): FirmwareSettings {
  const provisioningModeTtlSeconds = overrides.provisioningModeTtlSeconds ?? (build === 'debug' ? 30 * 60 : 5 * 60);
  return {
    provisioningModeTtlSeconds,
    provisioningTokenTtlSeconds: provisioningModeTtlSeconds,
    cloudBackupIntervalSeconds: 86_400,
    cloudBackupFirstDelaySeconds: 30,
    targetConnectTimeoutMs: 10_000,
    resultDisplayMs: 5_000,
    provisioningTxPowerDbm: 2,
    minimumTxPowerDbm: 2,
    maxLocalBackupBytes: MAX_CLOUD_BLOB_BYTES - FFCE_MIN_BYTES,
    chunkBytes: 4096,
    maxRecordBytes: 16 * 1024,
    visualTokenTtlSeconds: 30 * 60,
    ...overrides,
  };
}
