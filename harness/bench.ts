// What a scenario gets: the rig's boards (started when the scenario says), the cloud, the broker,
// and steps that are timed and recorded with OLED pictures and event-log excerpts for the report.
// Every scenario runs on a fresh bench: new flash, a new cloud database, a new air.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { mintToken } from '../cloud/auth/jwt.ts';
import { loadConfig } from '../cloud/config.ts';
import { startCloudServer, type RunningCloud } from '../cloud/server.ts';
import { VirtualAir } from './virtual-board.ts';
import { CHIPS } from '../firmware/image/chips.ts';
import { firmwareImage, variantOf } from '../firmware/sdk-host/firmware-image.ts';
import { softApMac as bssidOf } from '../firmware/chip/esp32s3-mac.ts';
import type { BenchBoard } from './board.ts';
import type { Broker } from './broker.ts';
import { runFleet, type FleetRun } from './fleet-cli.ts';
import { renderPng } from './oled.ts';
import type { BoardSpec, RigSpec } from './rig.ts';
import { SerialBoard, type BenchImage, type BoardIdentity } from './serial-board.ts';
import { VirtualBoard } from './virtual-board.ts';
import { API_PATHS } from '../firmware/src/core/api-paths.ts';

export interface Snapshot {
  board: string;
  label: string;
  file: string;
  lines: string[];
  events: string[];
}

export interface StepResult {
  name: string;
  ok: boolean;
  ms: number;
  error?: string;
  snapshots: Snapshot[];
  /** At a failure: each powered board's whole console, saved beside the report. */
  consoles?: { board: string; file: string }[];
}

/** An error's message, with the cause a failed fetch hides ("fetch failed: other side closed"). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause : undefined;
  return cause ? `${err.message}: ${cause.message}` : err.message;
}

export class ScenarioFailure extends Error {
  override name = 'ScenarioFailure';
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ScenarioFailure(message);
}

/**
 * Picks the board implementation for a spec: a virtual board driven in-process; a serial or RFC 2217
 * board; or a virtual board (`drive: rfc2217`) that the bench powers and then drives exactly as a
 * physical one, through its RFC 2217 port with nothing of the rig's identity (serial-board.ts).
 */
export function createBoard(spec: BoardSpec, env: ConstructorParameters<typeof VirtualBoard>[1], image?: BenchImage, identified?: BoardIdentity): BenchBoard {
  if (spec.kind !== 'virtual') return new SerialBoard(spec, { ...(image ? { image } : {}), ...(identified ? { identified } : {}) });
  if (spec.drive !== 'rfc2217') return new VirtualBoard(spec, env);
  const hardware = new VirtualBoard(spec, env);
  const seen: BoardSpec = { ...structuredClone(spec), kind: 'rfc2217', uuid: '', wifiMac: '', firmwareVersion: '', resetMethod: 'classic', baudRate: 115200 };
  delete seen.ethernetMac;
  delete seen.fuseKey;
  const power = {
    on: async () => {
      await hardware.start();
      return hardware.rfc2217Url;
    },
    off: () => hardware.stop(),
  };
  return new SerialBoard(seen, { power, ...(image ? { image } : {}) });
}

export class ScenarioContext {
  readonly steps: StepResult[] = [];
  readonly figures: Record<string, string | number> = {};
  readonly boards: BenchBoard[] = [];
  readonly air = new VirtualAir();
  cloud!: RunningCloud;
  private token = '';
  private imageServer: Server | undefined;
  private readonly images = new Map<string, Buffer>();
  private current: StepResult | undefined;
  private snapshotCount = 0;
  private readonly started = new Set<BenchBoard>();

  constructor(
    readonly rig: RigSpec,
    readonly broker: Broker,
    readonly workDir: string,
    readonly reportDir: string,
    readonly scenario: string,
    private readonly firmwareSettings: Record<string, unknown>,
    /** The image `fleet bench --flash` put on the physical boards, restored when a scenario moved their version. */
    private readonly image?: BenchImage,
    /** Boards a farm's health check read moments ago, by port: taken once, by the first scenario that prepares them. */
    private readonly identified?: Map<string, BoardIdentity>,
  ) {}

  async open(): Promise<void> {
    mkdirSync(this.workDir, { recursive: true });
    const secret = createHash('sha256').update(this.workDir).digest('hex');
    this.cloud = await startCloudServer(
      loadConfig({ PORT: '0', HOST: this.rig.benchHost, DATABASE_URL: join(this.workDir, 'cloud.sqlite'), JWT_SECRET: secret, APPCONFIG_DEPLOY_SECONDS: '1' }),
      { sink: () => undefined },
    );
    this.token = await mintToken(new TextEncoder().encode(secret), { subject: 'bench' });
    const site = this.rig.siteWifi;
    this.air.addInfrastructureAp({ ssid: site.ssid, password: site.password, bssid: 'AC:DE:48:00:00:01', position: site.position });
    for (const spec of this.rig.boards) {
      const checked = spec.port ? this.identified?.get(spec.port) : undefined;
      if (checked) this.identified!.delete(spec.port!);
      this.boards.push(createBoard(structuredClone(spec), { air: this.air, workDir: this.workDir, settings: this.firmwareSettings }, this.image, checked));
    }
    // Physical boards: identity read from them, factory state, held in reset until powered on.
    await Promise.all(this.boards.map((b) => b.prepare?.()));
  }

  async close(): Promise<void> {
    await Promise.all(this.boards.map((b) => b.stop().catch(() => undefined)));
    await this.cloud?.close();
    // A board still downloading an image (a stopped bench) must not hold the close.
    await new Promise<void>((r) => (this.imageServer ? (this.imageServer.close(() => r()), this.imageServer.closeAllConnections()) : r()));
  }

  controllers(): BenchBoard[] {
    return this.boards.filter((b) => b.spec.role === 'controller');
  }

  clients(): BenchBoard[] {
    return this.boards.filter((b) => b.spec.role === 'client');
  }

  /** Powers a board on (its boot, and anything the boot does, completes first). */
  async start(board: BenchBoard): Promise<void> {
    await board.start();
    this.started.add(board);
  }

  /** A timed, recorded step; a failure names the step and why. */
  async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const result: StepResult = { name, ok: false, ms: 0, snapshots: [] };
    this.steps.push(result);
    this.current = result;
    const t0 = performance.now();
    try {
      const value = await fn();
      result.ok = true;
      return value;
    } catch (err) {
      result.error = describeError(err);
      for (const b of this.started) this.snapshot(b, 'at the failure');
      result.consoles = [...this.started].map((b) => {
        const file = `${this.scenario}-${b.spec.id}-console.txt`;
        const host = b.hostLines?.() ?? [];
        const text = b.consoleLines().join('\n') + '\n' + (host.length ? `\n--- the virtual chip's notes (XS traces, host) ---\n${host.join('\n')}\n` : '');
        writeFileSync(join(this.reportDir, file), text);
        return { board: b.spec.id, file };
      });
      throw err;
    } finally {
      result.ms = Math.round(performance.now() - t0);
      this.current = undefined;
    }
  }

  /** The board's OLED as a PNG and its last event-log lines, attached to the current step. */
  snapshot(board: BenchBoard, label: string): void {
    const lines = board.display();
    const file = `${this.scenario}-${String(++this.snapshotCount).padStart(2, '0')}-${board.spec.id}.png`;
    writeFileSync(join(this.reportDir, file), renderPng(lines));
    const events = board.events().slice(-6).map((e) => `${e.level.toUpperCase()} ${e.source}: ${e.message}`);
    (this.current ?? this.steps[this.steps.length - 1])?.snapshots.push({ board: board.spec.id, label, file, lines, events });
  }

  async admin(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(this.cloud.url + path, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  }

  /** `fleet <args>` as an operator runs it (a real process) against this bench's cloud, as a super user. */
  fleet(args: string[]): Promise<FleetRun> {
    return runFleet(args, { url: this.cloud.url, token: this.token });
  }

  /** `fleet <args> --json`: its answer, or a failure naming the command and what it printed. */
  async fleetJson(args: string[]): Promise<any> {
    const r = await this.fleet([...args, '--json']);
    check(r.code === 0, `fleet ${r.args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
    return JSON.parse(r.stdout);
  }

  /** Logs in to a board's device-local API (Ethernet) and returns the visual-token header. */
  async login(board: BenchBoard): Promise<Record<string, string>> {
    const r = await board.http('ethernet', 'POST', API_PATHS.login, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: board.spec.adminPassword }) });
    check(r.status === 200, `login to ${board.spec.id} answered ${r.status} ${r.text}`);
    return { 'visual-token': r.json.token };
  }

  /** Enrolls a board with the cloud from its console (pubkey) and points it at the cloud. */
  async enroll(board: BenchBoard): Promise<void> {
    const answer = await board.command('pubkey');
    check(answer.startsWith('OK '), `pubkey answered ${answer}`);
    const { public_key_pem } = JSON.parse(answer.slice(3)) as { public_key_pem: string };
    const r = await this.admin('PUT', `/admin/devices/${board.spec.uuid}`, { public_key: public_key_pem });
    check(r.status === 201 || r.status === 200, `enrollment answered ${r.status} ${JSON.stringify(r.json)}`);
    check((await board.command(`cloud ${this.cloud.url}`)).startsWith('OK '), 'setting the cloud URL');
  }

  /**
   * Serves a firmware image for OTA on loopback; returns its URL, size and SHA-256. The image is the
   * ESP-IDF app image `fleet image build --version <version>` makes, unless the scenario brings its own.
   */
  async serveImage(version: string, image?: Uint8Array, name = version): Promise<{ url: string; size: number; sha256: string }> {
    if (!this.imageServer) {
      this.imageServer = createServer((req, res) => {
        const image = this.images.get(req.url ?? '');
        if (!image) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': image.length }).end(image);
      });
      await new Promise<void>((r) => this.imageServer!.listen(0, this.rig.benchHost, r));
    }
    const bytes = Buffer.from(image ?? (await firmwareImage(version)));
    this.images.set(`/fw/${name}.bin`, bytes);
    return { url: `http://${this.rig.benchHost}:${(this.imageServer.address() as AddressInfo).port}/fw/${name}.bin`, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
  }

  /** The app image of `version` built for this board (its role, class and build, this bench's settings). */
  imageFor(board: BenchBoard, version: string): Promise<Uint8Array> {
    const s = board.spec;
    const variant = variantOf(
      { role: s.role, hardwareClass: s.hardwareClass, productHex: s.productHex, build: s.build, ...(s.ethernetMac ? { ethernetMac: s.ethernetMac } : {}) },
      { settings: this.firmwareSettings as Record<string, number> },
    );
    return firmwareImage(version, { chip: CHIPS[s.chip], variant });
  }

  /** The SoftAP BSSID of a board (what a station sees). */
  bssidOf(board: BenchBoard): string {
    return bssidOf(board.spec.wifiMac);
  }
}
