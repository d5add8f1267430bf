// One board's firmware: wires the stores, keys, API, provisioning, procedures, automatic backup, OTA
// and the serial console onto a HAL. Portable: the same class runs on an ESP32, in XS on a virtual
// board, and on Node in tests.
import type { Hal } from '../hal/index.ts';
import type { HttpRequest, HttpResponse } from '../hal/network.ts';
import { DeviceApi } from './api.ts';
import { PASSWORD_PATH, VisualTokens } from './auth/visual-token.ts';
import { LocalBackupStore } from './backup/local-store.ts';
import { base64Encode, concatBytes, hexDecode } from './bytes.ts';
import { storedClientConfiguration } from './client-configuration.ts';
import { AutoBackup } from './cloud/auto-backup.ts';
import { CloudBackupClient } from './cloud/backup-client.ts';
import { readCloudConfig, writeCloudConfig } from './cloud/config.ts';
import { COMMANDS, ConsoleProtocol } from './console/console.ts';
import { deriveBackupKey, deriveIdentityKey, deriveStorageKey } from './crypto/device-keys.ts';
import { recoverStorage } from './boot-repair.ts';
import { runFactoryReset } from './flash.ts';
import { HealthReporter } from './health/reporter.ts';
import { checkAndInstall, confirmRunningApp } from './ota/client.ts';
import { clientProvisioningAttempt, startClientNormalMode, type ClientAttempt } from './provisioning/client.ts';
import { ClientMqtt } from './provisioning/client-mqtt.ts';
import { ProvisioningMode } from './provisioning/mode.ts';
import { controllerConfiguration, PROVISIONING_INCOMPLETE_PATH, runTargetProcedure, type TargetOutcome } from './provisioning/target.ts';
import { ProvisioningTokens } from './provisioning/tokens.ts';
import { RecordStore } from './records.ts';
import { defaultSettings, type FirmwareSettings } from './settings.ts';
import { REBOOT_GRACE_MS, rebootSoon } from './reboot.ts';

/** More than a chip's whole heap (the esp32s3's 78,848 chunk bytes and 4,927 slots of 16 bytes): what `fault memory` holds at most. */
const MEMORY_FAULT_BYTES = 4 * 1024 * 1024;

/**
 * `fault memory` (debug builds): holds ever more memory, as a leak would, until the heap is full. On a
 * chip, and on a virtual board (the SDK's XS with the chip's heaps), XS aborts with "memory full" and
 * the chip restarts through its bootloader: what the bench checks is what survives that. A host whose
 * heap grows (the memory platform) stops at MEMORY_FAULT_BYTES, answers and lets it all go.
 */
function exhaustMemory(): { held_bytes: number } {
  const held: Uint8Array[] = [];
  let bytes = 0;
  while (bytes < MEMORY_FAULT_BYTES) {
    held.push(new Uint8Array(1024));
    bytes += 1024;
  }
  return { held_bytes: bytes };
}

/** `fault throw` (debug builds): an exception no handler catches, thrown from a timer: XS aborts ("unhandled exception"). */
function injectedThrow(): never {
  throw new Error('injected fault: an exception nobody catches');
}

/** `fault hang` (debug builds): a main loop that never yields again, until the task watchdog resets the chip. */
function hang(): void {
  for (;;) {
    /* spin */
  }
}

/** SPKI DER header of an uncompressed P-256 public key (RFC 5480): then the 65-byte point. */
const P256_SPKI_PREFIX = hexDecode('3059301306072a8648ce3d020106082a8648ce3d030107034200');

export interface DeviceOptions {
  settings?: Partial<FirmwareSettings>;
  /** Set as the admin password at first boot when none is stored (factory set-up). */
  initialAdminPassword?: string;
  /** Seconds between two client provisioning scan cycles. */
  clientScanIntervalSeconds?: number;
}

export type BootResult =
  | { role: 'controller'; provisioning: TargetOutcome }
  | { role: 'client'; provisioning: ClientAttempt; normal?: Awaited<ReturnType<typeof startClientNormalMode>> };

export class Device {
  readonly hal: Hal;
  readonly settings: FirmwareSettings;
  readonly local: LocalBackupStore;
  readonly records: RecordStore;
  readonly tokens: ProvisioningTokens;
  readonly mode: ProvisioningMode;
  readonly visual: VisualTokens;
  readonly cloud: CloudBackupClient;
  readonly api: DeviceApi;
  readonly console: ConsoleProtocol;
  readonly autoBackup: AutoBackup;
  readonly health: HealthReporter;
  /** A client's MQTT session, for `status` (client-mqtt.ts). */
  readonly mqtt: ClientMqtt;
  private readonly identityKey: Uint8Array;
  private readonly scanIntervalMs: number;

  constructor(hal: Hal, private readonly options: DeviceOptions = {}) {
    const identity = hal.system.identity();
    this.settings = defaultSettings(identity.build, options.settings);
    this.scanIntervalMs = (options.clientScanIntervalSeconds ?? 10) * 1000;
    this.console = new ConsoleProtocol((line) => hal.console.writeLine(line));
    // The OLED is mirrored on the console so a harness can read it from the serial line.
    this.hal = { ...hal, display: { show: (lines) => (hal.display.show(lines), this.console.oled(lines)) } };
    const fuseHmac = (m: Uint8Array) => hal.fuse.hmac(m);
    this.identityKey = deriveIdentityKey(fuseHmac);
    const backupKey = deriveBackupKey(fuseHmac);
    const s = this.settings;
    this.local = new LocalBackupStore(hal.storage, hal.crypto, s.maxLocalBackupBytes, s.chunkBytes);
    this.records = new RecordStore(hal.storage, hal.crypto, deriveStorageKey(fuseHmac));
    this.tokens = new ProvisioningTokens(hal.crypto, () => hal.clock.uptime(), s.provisioningTokenTtlSeconds * 1000);
    this.mode = new ProvisioningMode(this.hal, this.records, this.tokens, s, (level, m) => this.log(level, 'provisioning', m));
    this.visual = new VisualTokens(hal, s.visualTokenTtlSeconds * 1000, (level, m) => this.log(level, 'auth', m));
    this.cloud = new CloudBackupClient(hal, { backupKey, identityKey: this.identityKey }, this.local, s.chunkBytes);
    this.api = new DeviceApi({
      settings: s,
      visual: this.visual,
      local: this.local,
      cloud: this.cloud,
      records: this.records,
      mode: this.mode,
      tokens: this.tokens,
      storage: hal.storage,
      status: () => this.status(),
      events: (count) => this.hal.eventLog.recent(count),
      log: (level, m) => this.log(level, 'api', m),
      // The admin configured this board through the API: no longer an unfinished provisioning copy.
      configuredLocally: () => void hal.storage.remove(PROVISIONING_INCOMPLETE_PATH),
    });
    this.autoBackup = new AutoBackup(
      hal.timers,
      s.cloudBackupFirstDelaySeconds * 1000,
      s.cloudBackupIntervalSeconds * 1000,
      () => this.local.size() !== null,
      () => this.cloud.push(),
      (level, m) => this.log(level, 'backup', m),
    );
    this.health = new HealthReporter(this.hal, this.identityKey, (level, m) => this.log(level, 'health', m));
    this.mqtt = new ClientMqtt(() => (hal.clock.synchronized() ? new Date(hal.clock.now()).toISOString() : null));
    this.registerCommands();
  }

  log(level: 'info' | 'warning' | 'error', source: string, message: string): void {
    this.hal.eventLog.append(level, source, message);
    this.console.log(level.toUpperCase(), source, message);
  }

  handle(request: HttpRequest): Promise<HttpResponse> {
    return this.api.handle(request);
  }

  /** The identity public key as PEM SPKI, for `fleet device enroll`. */
  publicKeyPem(): string {
    const der = concatBytes(P256_SPKI_PREFIX, this.hal.crypto.p256PublicKey(this.identityKey));
    const b64 = base64Encode(der);
    const lines = b64.match(/.{1,64}/g) ?? [];
    return `-----BEGIN PUBLIC KEY-----\n${lines.join('\n')}\n-----END PUBLIC KEY-----\n`;
  }

  status(): Record<string, unknown> {
    const me = this.hal.system.identity();
    return {
      uuid: me.uuid,
      role: me.role,
      firmware_version: me.firmwareVersion,
      build: me.build,
      // The interfaces' MACs as the firmware has them (on a board, from the eFuse): a bench checks
      // them against the ROM's base MAC to know it talks to the board it flashed.
      wifi_mac: me.wifiMac,
      ethernet_mac: me.ethernetMac ?? null,
      configured: me.role === 'controller' ? controllerConfiguration(this).configured : storedClientConfiguration(this).config !== undefined,
      provisioning: this.mode.status(),
      backup: this.local.size() === null ? null : { size: this.local.size(), etag: this.local.etag() },
      cloud: readCloudConfig(this.hal.storage)?.url ?? null,
      clock_synchronized: this.hal.clock.synchronized(),
      ...(me.role === 'client' ? { mqtt: this.mqtt.status() } : {}),
    };
  }

  /** Boot: repair interrupted writes, serve the API, start the timers, provision if unconfigured. */
  async boot(): Promise<BootResult> {
    const me = this.hal.system.identity();
    // Power cuts: the backup and its sidecar made to agree, temporary files removed, an interrupted
    // factory reset finished (docs/storage.md).
    const repaired = recoverStorage(this.hal.storage, { local: this.local, factoryReset: () => this.factoryResetSteps() });
    if (repaired.factoryResetFinished !== null) this.log('warning', 'boot', `a factory reset was interrupted by a power cut: finished now (${repaired.factoryResetFinished} records removed)`);
    if (this.options.initialAdminPassword && !this.visual.hasPassword()) this.visual.setPassword(this.options.initialAdminPassword);
    // Why the last run ended, before anything else can end this one (docs/device-health.md).
    this.health.boot();
    // A controller serves its API on Ethernet and on its SoftAP (provisioning); a client, which has
    // neither, on its Wi-Fi station interface, reachable once it has joined the site network
    // (spec 4.2: the /backup endpoints are shared across all device types; docs/firmware-api.md).
    if (me.role === 'controller') {
      this.hal.network.listen('ethernet', (r) => this.handle(r), this.api.memory);
      this.hal.network.listen('softap', (r) => this.handle(r), this.api.memory);
    } else this.hal.network.listen('station', (r) => this.handle(r), this.api.memory);
    this.hal.console.onLine((line) => void this.console.dispatch(line));
    this.autoBackup.start();
    this.log('info', 'boot', `${me.role} ${me.uuid} firmware ${me.firmwareVersion} (${me.build})`);
    this.hal.display.show([me.role === 'controller' ? 'Controller' : 'Client', me.uuid.slice(0, 21), `fw ${me.firmwareVersion}${me.build === 'debug' ? ' debug' : ''}`]);
    if (me.role === 'controller') {
      const provisioning = await runTargetProcedure({ hal: this.hal, settings: this.settings, records: this.records, local: this.local, log: (l, m) => this.log(l, 'target', m) });
      this.console.event({ event: 'target_provisioning', ...provisioning });
      return { role: 'controller', provisioning };
    }
    const ctx = { hal: this.hal, settings: this.settings, records: this.records, mqtt: this.mqtt, log: (l: 'info' | 'warning' | 'error', m: string) => this.log(l, 'client', m) };
    // Spec 3.5 step 1: a configuration the client cannot use sends it back to provisioning.
    const stored = storedClientConfiguration(ctx);
    if (stored.problem) this.log('warning', 'client', `stored configuration is not usable (${stored.problem.field} ${stored.problem.reason}): provisioning again`);
    const provisioning = await clientProvisioningAttempt(ctx);
    this.console.event({ event: 'client_provisioning', result: provisioning });
    if (provisioning === 'configured') {
      const normal = await startClientNormalMode(ctx);
      this.console.event({ event: 'client_normal_mode', result: normal });
      return { role: 'client', provisioning, normal };
    }
    if (provisioning !== 'provisioned') this.scheduleClientRetry(ctx);
    return { role: 'client', provisioning };
  }

  /**
   * Once the firmware is up (booted, listening): a new image confirms itself, so that a later reset no
   * longer rolls it back, and an update that brought it has succeeded. Returns what to log, or null.
   */
  confirmRunningApp(): string | null {
    const confirmed = confirmRunningApp(this.hal);
    this.health.confirmed();
    return confirmed;
  }

  private scheduleClientRetry(ctx: Parameters<typeof clientProvisioningAttempt>[0]): void {
    this.hal.timers.setTimeout(() => {
      void clientProvisioningAttempt(ctx).then((result) => {
        this.console.event({ event: 'client_provisioning', result });
        if (result !== 'provisioned' && result !== 'configured') this.scheduleClientRetry(ctx);
      });
    }, this.scanIntervalMs);
  }

  private registerCommands(): void {
    const c = this.console;
    c.on('help', () => ({ commands: [...COMMANDS] }));
    c.on('status', () => this.status());
    c.on('reboot', () => {
      rebootSoon(this.hal, 'console');
      return { rebooting: true };
    });
    c.on('prov on', () => this.mode.enable());
    c.on('prov off', async () => {
      await this.mode.disable('console');
      return { active: false };
    });
    c.on('pubkey', () => ({ uuid: this.hal.system.identity().uuid, public_key_pem: this.publicKeyPem() }));
    c.on('password', (args) => {
      this.visual.setPassword(args);
      return { password: 'set' };
    });
    c.on('cloud', (args) => {
      if (args === 'none') writeCloudConfig(this.hal.storage, null);
      else if (/^https?:\/\/\S+$/.test(args)) writeCloudConfig(this.hal.storage, { url: args });
      else throw Object.assign(new Error('usage: cloud <http(s) URL> | cloud none'), { code: 'usage' });
      void this.health.send(); // what waited for a cloud goes now
      return { url: readCloudConfig(this.hal.storage)?.url ?? null };
    });
    c.on('backup now', () => this.cloud.push());
    c.on('fault', (args) => {
      if (this.hal.system.identity().build !== 'debug') throw Object.assign(new Error('fault injection exists in debug builds only'), { code: 'not_debug_build' });
      const m = /^record (controllers|clients) (\S+)$/.exec(args);
      if (args === 'memory') return exhaustMemory();
      // What a firmware bug does: an exception nobody catches (XS aborts), a loop that never yields (the watchdog resets).
      // (After the grace a reboot waits too: the console's answer goes out first. core/reboot.ts.)
      if (args === 'throw' || args === 'hang') {
        this.hal.timers.setTimeout(args === 'throw' ? injectedThrow : hang, REBOOT_GRACE_MS);
        return { fault: args };
      }
      if (args === 'clear') this.api.faults.clear();
      else if (m) this.api.faults.add(`${m[1]}/${m[2]}`);
      else throw Object.assign(new Error('usage: fault record <controllers|clients> <uuid> | fault memory | fault throw | fault hang | fault clear'), { code: 'usage' });
      return { faults: [...this.api.faults] };
    });
    c.on('ota check', () => checkAndInstall(this.hal, { reboot: true, updates: this.health }));
    c.on('health', () => this.health.status());
    c.on('health now', () => this.health.heartbeat());
    c.on('health interval', (args) => {
      this.health.setHeartbeatSeconds(Number(args));
      return this.health.status();
    });
    c.on('factory-reset', () => {
      // All or nothing across a power cut: a marker first, the steps, the marker last; a marker
      // found at boot finishes the reset (recoverStorage; docs/storage.md, "Factory reset").
      const records = runFactoryReset(this.hal.storage, () => this.factoryResetSteps());
      this.log('info', 'console', `factory reset: ${records} records, the local backup, the cloud URL and the admin password removed; rebooting`);
      rebootSoon(this.hal, 'factory reset');
      return { removed_records: records, rebooting: true };
    });
  }

  /** What a factory reset removes; each step idempotent (removals only), so a reset may run again. */
  private factoryResetSteps(): number {
    const records = this.records.clear();
    this.local.remove();
    writeCloudConfig(this.hal.storage, null);
    this.hal.storage.remove(PASSWORD_PATH);
    this.hal.storage.remove(PROVISIONING_INCOMPLETE_PATH);
    return records;
  }
}
