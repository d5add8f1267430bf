// A board the harness reaches as it reaches a physical one: its console over a transport (a USB
// serial port, or a port on an RFC 2217 server such as ser2net), its resets through DTR/RTS as the
// rig's reset method says, its device-local API at a network address (the rig's, or the one its
// console announces), and its identity read from it: the chip and the eFuse MAC from the ROM, the
// UUID, role, build and version from the firmware's `status`. Before each scenario the bench
// prepares it: identify, factory-reset when it holds anything, re-flash the bench image when its
// version moved (OTA), then hold it in reset until the scenario powers it on.
//
// A virtual board with `drive: rfc2217` is driven by this same code: the bench starts it (the
// "power" of a USB hub port, BoardPower) and hands over nothing but its RFC 2217 URL.
import { interfaceMac } from '../firmware/chip/esp32s3-mac.ts';
import { bootEndingEventPattern } from '../firmware/src/core/console/lines.ts';
import { CHIPS } from '../firmware/image/chips.ts';
import { TimeoutError, displayFrom, eventsFrom, httpAnswer, type BenchBoard, type EventLine, type HttpAnswer, type Iface } from './board.ts';
import { readChipIdentity } from './flash/esptool.ts';
import { BOOT_LINE, flashBoard, HALT_LINE } from './flash/flash-board.ts';
import type { FlashPlan } from './flash/inputs.ts';
import { WebSerialAdapter } from './flash/web-serial.ts';
import type { BoardSpec } from './rig.ts';
import { SerialConsole } from './serial-console.ts';
import { createTransport } from './transport/open.ts';
import { runResetSequence, SEQUENCES, type ResetMethod } from './transport/reset-sequence.ts';
import type { SerialTransport } from './transport/transport.ts';

/** What the bench switches besides the serial port: a virtual board's power; nothing for a board on a USB hub. */
export interface BoardPower {
  /** Powers the board and returns its port (a path or rfc2217://host:port). */
  on(): Promise<string>;
  off(): Promise<void>;
}

/**
 * What a health check read from a board (identify): the ROM answered a sync, its chip, eFuse MAC and
 * flash ID; the app booted and its console answered `status`.
 */
export interface BoardIdentity {
  chip: string;
  mac: string;
  flashId: number;
  status: Record<string, any>;
}

/** The image of `fleet bench --flash`: written to every board first, and again when a scenario left another version. */
export interface BenchImage {
  plan: FlashPlan;
  version: string;
  productTable: import('../firmware/image/partition-table.ts').PartitionEntry[];
  /** Ports flashed in this run. */
  flashed: Set<string>;
}

export class BoardSetupError extends Error {
  override name = 'BoardSetupError';
}

const BOOT_TIMEOUT_MS = 60_000;
/** The end of a boot: the outcome of what the firmware does at start (device.ts boot()). */
const BOOT_DONE = bootEndingEventPattern();
/** A listener's address: a Moddable board's log line, or a virtual board's host line. */
const LISTENING = /^(?:LOG INFO board: |HOST )(ethernet|softap|station): listening on (\S+?):(\d+)$/;
const ROM_BANNER = /^ESP-ROM:/;

export class SerialBoard implements BenchBoard {
  private transport: SerialTransport | undefined;
  private console: SerialConsole | undefined;
  private held = false;

  constructor(
    readonly spec: BoardSpec,
    /** identified: what a health check read moments ago (harness/farm/health.ts): prepare starts from it instead of resetting the board again. */
    private readonly o: { power?: BoardPower; image?: BenchImage; identified?: BoardIdentity } = {},
  ) {}

  private get method(): ResetMethod {
    return this.spec.resetMethod ?? 'classic';
  }

  private need(): SerialConsole {
    if (!this.console) throw new Error(`board ${this.spec.id} is not prepared (no console)`);
    return this.console;
  }

  /** Opens the board's port and console (powering a virtual board driven as a physical one). */
  private async open(): Promise<void> {
    const s = this.spec;
    if (this.o.power) s.port = await this.o.power.on();
    if (!s.port) throw new BoardSetupError(`board ${s.id} has no port`);
    if (this.method === 'none') throw new BoardSetupError(`board ${s.id}: reset method none: the bench cannot reset it (wire DTR/RTS or use usb-jtag)`);
    this.transport = await createTransport(s.port);
    await this.transport.connect(s.baudRate ?? 115200);
    this.console = new SerialConsole(this.transport);
  }

  /**
   * The health check: the ROM answers a sync, names the rig's chip, its eFuse base MAC (as esptool's
   * read_mac) and the flash ID; then the app boots and its console answers `status`.
   */
  async identify(o: { beforeBoot?: () => Promise<void> } = {}): Promise<BoardIdentity> {
    const s = this.spec;
    if (!this.console) await this.open();
    const rom = await readChipIdentity(new WebSerialAdapter(this.transport!), this.method === 'classic' ? 'default_reset' : 'usb_reset');
    const expected = CHIPS[s.chip].displayName;
    if (rom.chip !== expected) throw new BoardSetupError(`board ${s.id} on ${s.port} is an ${rom.chip}; the rig says ${expected}`);
    await o.beforeBoot?.();
    const status = await this.bootAndStatus(() => this.hardReset());
    return { chip: s.chip, mac: rom.mac, flashId: rom.flashId, status };
  }

  /** Identify the board, bring it to its factory state, restore the bench image, hold it in reset. */
  async prepare(): Promise<void> {
    const s = this.spec;
    const image = this.o.image;
    const fresh = this.o.identified;
    let identity: BoardIdentity;
    if (fresh) {
      // Checked moments ago and left running its app: its console answers without another reset.
      await this.open();
      identity = { ...fresh, status: await this.statusNow() };
    } else identity = await this.identify({ beforeBoot: image && !image.flashed.has(s.port!) ? () => this.flash(image) : undefined });
    s.wifiMac = identity.mac;
    if (s.role === 'controller') s.ethernetMac = interfaceMac(identity.mac, 'ethernet');
    let status = identity.status;
    if (image && status.firmware_version !== image.version) {
      await this.flash(image);
      status = await this.bootAndStatus(() => this.hardReset());
    }
    if (status.configured || status.backup !== null || status.cloud !== null || status.provisioning?.active) {
      const from = this.need().lines.length;
      const answer = await this.command('factory-reset');
      if (!answer.startsWith('OK ')) throw new BoardSetupError(`board ${s.id}: factory-reset answered ${answer}`);
      status = await this.bootAndStatus(async () => undefined, from);
    }
    if (status.role !== s.role) throw new BoardSetupError(`board ${s.id} is a ${status.role}; the rig says ${s.role}`);
    if (status.build !== s.build) throw new BoardSetupError(`board ${s.id} runs a ${status.build} build; the rig says ${s.build}`);
    // The firmware's own MACs must be the ones the ROM gave: otherwise the port leads to another
    // board than the one flashed and read (a USB hub renumbering mid-run), or the firmware derives
    // its Ethernet MAC differently from ESP-IDF's base + 3; either way the rig's identity is wrong.
    for (const [field, want] of [['wifi_mac', s.wifiMac], ['ethernet_mac', s.ethernetMac ?? null]] as const) {
      if (status[field] !== undefined && status[field] !== want) throw new BoardSetupError(`board ${s.id}: the firmware's ${field} is ${status[field]}; the ROM's base MAC gives ${want}`);
    }
    s.uuid = status.uuid;
    s.firmwareVersion = status.firmware_version;
    await this.powerOff();
  }

  /** Writes the bench image (left in the stub: the caller resets). */
  private async flash(image: BenchImage): Promise<void> {
    const s = this.spec;
    await flashBoard({ transport: this.transport!, plan: image.plan, productTable: image.productTable, baudRate: 921_600, chip: s.chip, resetMethod: this.method, reset: false });
    await this.transport!.setBaudRate(s.baudRate ?? 115200);
    image.flashed.add(s.port!);
  }

  /** The firmware's boot (after `reset`), then its `status`. */
  private async bootAndStatus(reset: () => Promise<void>, from = this.need().lines.length): Promise<Record<string, any>> {
    await reset();
    await this.waitForBoot(from);
    return this.statusNow();
  }

  private async statusNow(): Promise<Record<string, any>> {
    const c = this.need();
    const from = c.lines.length;
    let answer = await this.command('status');
    // An answer to a line typed before may come first: a virtual board's factory types the admin
    // password on the console at its first boot (firmware/virtual-esp32/board.ts), right after a factory reset.
    for (let i = 0; i < 3 && answer.startsWith('OK ') && !answer.includes('"uuid"'); i++) answer = await c.waitFor(/^(OK|ERR) /, 10_000, c.lines.indexOf(answer, from) + 1);
    if (!answer.startsWith('OK ')) throw new BoardSetupError(`board ${this.spec.id}: status answered ${answer}`);
    return JSON.parse(answer.slice(3));
  }

  /** The boot line from `from` on, then the event that ends the boot (device.ts boot()). */
  private async waitForBoot(from: number): Promise<void> {
    const c = this.need();
    // The bootloader's "nothing to boot" ends the wait at once (a health check's verdict, not a time-out).
    const line = await c.waitFor(new RegExp(`${BOOT_LINE.source}|${HALT_LINE.source}`), BOOT_TIMEOUT_MS, from);
    if (HALT_LINE.test(line)) throw new BoardSetupError(`board ${this.spec.id} did not boot: ${line}`);
    await c.waitFor(BOOT_DONE, BOOT_TIMEOUT_MS, c.lines.indexOf(line, from) + 1);
  }

  private async hardReset(): Promise<void> {
    this.held = false;
    await runResetSequence(this.transport!, SEQUENCES[this.method].hard);
  }

  /** Held in reset (EN low) where the wiring allows: the bench's "power off". */
  private async powerOff(): Promise<void> {
    const hold = SEQUENCES[this.method].hold;
    if (!hold) return;
    await runResetSequence(this.transport!, hold);
    this.held = true;
  }

  /** Power on: released from the hold (or reset), and the boot and what it does completed. */
  async start(): Promise<void> {
    const from = this.need().lines.length;
    if (this.held) {
      this.held = false;
      await runResetSequence(this.transport!, SEQUENCES[this.method].release);
    } else await this.hardReset();
    await this.waitForBoot(from);
  }

  async reset(): Promise<void> {
    const from = this.need().lines.length;
    await this.hardReset();
    await this.need().waitFor(BOOT_LINE, BOOT_TIMEOUT_MS, from);
  }

  async stop(): Promise<void> {
    await this.console?.close();
    this.console = undefined;
    this.transport = undefined;
    await this.o.power?.off();
  }

  consoleLines(): string[] {
    return this.console?.lines ?? [];
  }

  command(line: string, timeoutMs?: number): Promise<string> {
    return this.need().command(line, timeoutMs);
  }

  waitForLine(pattern: RegExp, timeoutMs: number, fromIndex = 0): Promise<string> {
    return this.need().waitFor(pattern, timeoutMs, fromIndex);
  }

  /** The interface's address: the rig's, else the last one the console announced since the last boot. */
  async address(iface: Iface): Promise<string> {
    if (iface === 'ethernet' && this.spec.ethernetUrl) return this.spec.ethernetUrl;
    if (iface === 'softap' && this.spec.softapUrl) return this.spec.softapUrl;
    const lines = this.consoleLines();
    // Only what the current boot announced: from the last ROM banner on.
    let from = lines.length - 1;
    while (from > 0 && !ROM_BANNER.test(lines[from]!)) from--;
    from = Math.max(from, 0);
    // The last announcement wins; a virtual board's HOST line just before its firmware's
    // "listening on <address>:80" says which loopback port stands for port 80 there.
    const announced = (ls: string[]) => {
      let found: RegExpExecArray | undefined;
      for (let i = ls.length - 1; i >= 0; i--) {
        const m = LISTENING.exec(ls[i]!);
        if (!m || m[1] !== iface) continue;
        if (!found) found = m;
        else if (m[2] === found[2] && ls[i]!.startsWith('HOST ') && !found[0].startsWith('HOST ')) found = m;
        else break;
        if (found[0].startsWith('HOST ')) break;
      }
      return found ? `http://${found[2]}:${found[3]}` : undefined;
    };
    const now = announced(lines.slice(from));
    if (now) return now;
    try {
      const line = await this.need().waitFor(new RegExp(`^(?:LOG INFO board: |HOST )${iface}: listening on `), 10_000, from);
      return announced([line])!;
    } catch (err) {
      if (err instanceof TimeoutError) throw new Error(`board ${this.spec.id} did not announce its ${iface} address on its console (and the rig gives none)`);
      throw err;
    }
  }

  async http(iface: Iface, method: string, path: string, o: { headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<HttpAnswer> {
    const base = await this.address(iface);
    return httpAnswer(await fetch(base + path, { method, headers: o.headers ?? {}, body: o.body }));
  }

  display(): string[] {
    return displayFrom(this.consoleLines());
  }

  events(): EventLine[] {
    return eventsFrom(this.consoleLines());
  }
}
