// A virtual board: the firmware in XS (XsBoard) with its flash folder, fuse key, radios in the shared
// virtual air, and its console on a real pseudo-terminal pair. The harness reads and writes the
// console through node-serialport, exactly as it would a board on a USB adapter; reboots requested by
// the firmware restart the engine on the same flash.
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import type { VirtualAir } from '../firmware/host/air.ts';
import { XsBoard, type MeterTotals, type MqttBridge } from '../firmware/host/xs-board.ts';
import { displayFrom, eventsFrom, httpAnswer, type BenchBoard, type EventLine, type HttpAnswer, type Iface } from './board.ts';
import { LineSplitter } from './lines.ts';
import { openPtyPair, type PtyPair } from './pty.ts';
import type { BoardSpec } from './rig.ts';
import { SerialConsole } from './serial-console.ts';

export interface VirtualEnvironment {
  air: VirtualAir;
  mqtt: MqttBridge;
  workDir: string;
  /** Firmware settings for every virtual board (e.g. shorter display times on a bench). */
  settings?: Record<string, unknown>;
}

export class VirtualBoard implements BenchBoard {
  private xs: XsBoard | undefined;
  private pty: PtyPair | undefined;
  private uart: SerialPort | undefined;
  private console: SerialConsole | undefined;
  /** Console input from the harness, a line at a time, into the firmware. */
  private readonly uartLines = new LineSplitter((line) => void this.xs?.send({ type: 'console', line }).catch(() => undefined));
  private restarting: Promise<void> | undefined;
  private stopped = false;
  /** Every reboot the firmware asked for, with its reason. */
  readonly reboots: string[] = [];
  /** Meter totals of each boot (the XS computrons and heap growth of the boot command). */
  readonly bootMeters: MeterTotals[] = [];

  constructor(
    readonly spec: BoardSpec,
    private readonly env: VirtualEnvironment,
  ) {}

  get engine(): XsBoard {
    if (!this.xs) throw new Error(`board ${this.spec.id} is not running`);
    return this.xs;
  }

  async start(): Promise<void> {
    this.stopped = false;
    if (!this.pty) {
      this.pty = await openPtyPair(this.env.workDir, this.spec.id);
      this.uart = new SerialPort({ path: this.pty.boardEnd, baudRate: 115200, autoOpen: false, hupcl: false });
      await new Promise<void>((resolve, reject) => this.uart!.open((e) => (e ? reject(e) : resolve())));
      this.uart.on('data', (chunk: Buffer) => this.uartLines.push(chunk));
      this.console = await SerialConsole.open(this.pty.harnessEnd);
    }
    await this.boot();
  }

  private async boot(): Promise<void> {
    const s = this.spec;
    // The engine is the board's from the start: console input typed while it boots waits in the
    // worker's queue, as it would in a UART's buffer.
    this.xs = await XsBoard.start({
      deferBoot: true,
      identity: {
        uuid: s.uuid,
        role: s.role,
        wifiMac: s.wifiMac,
        ...(s.ethernetMac ? { ethernetMac: s.ethernetMac } : {}),
        hardwareClass: s.hardwareClass,
        productHex: s.productHex,
        firmwareVersion: s.firmwareVersion,
        build: s.build,
      },
      fuseKeyHex: s.fuseKey!,
      flashDir: join(this.env.workDir, `${s.id}-flash`),
      adminPassword: s.adminPassword,
      air: this.env.air,
      mqtt: this.env.mqtt,
      position: s.position,
      settings: this.env.settings ?? {},
      onConsoleLine: (line) => this.uart?.write(line + '\n'),
      onReboot: (reason) => {
        this.reboots.push(reason);
        if (!this.stopped) this.restarting = this.restart();
      },
    });
    await this.xs.boot();
    this.bootMeters.push({ ...this.xs.meter });
  }

  /** Power-cycle: the engine and its RAM are gone, the flash folder stays. */
  private async restart(): Promise<void> {
    await this.xs?.close();
    this.xs = undefined;
    if (!this.stopped) await this.boot();
  }

  async reset(): Promise<void> {
    await this.restarting;
    await this.restart();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.restarting?.catch(() => undefined);
    await this.xs?.close();
    this.xs = undefined;
    await this.console?.close();
    await new Promise<void>((r) => (this.uart?.isOpen ? this.uart.close(() => r()) : r()));
    await this.pty?.close();
    this.pty = undefined;
  }

  consoleLines(): string[] {
    return this.console?.lines ?? [];
  }

  command(line: string, timeoutMs?: number): Promise<string> {
    if (!this.console) throw new Error(`board ${this.spec.id} is not started`);
    return this.console.command(line, timeoutMs);
  }

  waitForLine(pattern: RegExp, timeoutMs: number, fromIndex = 0): Promise<string> {
    if (!this.console) throw new Error(`board ${this.spec.id} is not started`);
    return this.console.waitFor(pattern, timeoutMs, fromIndex);
  }

  async http(iface: Iface, method: string, path: string, o: { headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<HttpAnswer> {
    const base = this.engine.urls[iface];
    if (!base) throw new Error(`board ${this.spec.id} has no ${iface} listener`);
    return httpAnswer(await fetch(base + path, { method, headers: o.headers ?? {}, body: o.body }));
  }

  display(): string[] {
    return displayFrom(this.consoleLines());
  }

  events(): EventLine[] {
    return eventsFrom(this.consoleLines());
  }

  moveTo(position: { x: number; y: number }): void {
    this.spec.position = position;
    if (this.xs) this.xs.position = position;
  }
}
