// The emulated Moddable SDK alone in a real XS engine, with its host side (firmware/sim/host), for the
// emulation's own tests: code evaluated in XS uses the modules on `sdk` and hands values out with
// `report(value)`; the test collects them with reports()/waitFor().
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { FlashFolder } from '../../firmware/virtual-esp32/flash-folder.ts';
import { bundleForSim } from '../../firmware/sim/bundle.ts';
import { SimHost, type SimBoardSide } from '../../firmware/sim/host/sim-host.ts';
import { decodeFrame, encodeFrame } from '../../firmware/sim/wire.ts';
import { XsWorker } from '../../firmware/xs/worker.ts';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('../../firmware/sim/xs/sdk-entry.ts', import.meta.url));
let bundle: Promise<string> | undefined;

export interface SimEngineOptions {
  wifiMac?: string;
  ethernetMac?: string;
  air?: VirtualAir;
  addresses?: SimBoardSide['addresses'];
  sntpTime?: () => number | null;
  position?: { x: number; y: number };
}

export class SimEngine {
  readonly consoleLines: string[] = [];
  readonly frames: string[][] = [];
  readonly restarts: number[] = [];
  readonly flashDir: string;
  readonly host: SimHost;
  readonly fuseKey = Buffer.alloc(32, 0x5a);
  urls: Record<string, string> = {};
  private collected: unknown[] = [];
  private readonly dir: string;

  private constructor(
    private readonly worker: XsWorker,
    o: SimEngineOptions,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'sim-engine-'));
    this.flashDir = join(this.dir, 'flash');
    mkdirSync(this.flashDir);
    const flash = new FlashFolder(this.flashDir);
    this.host = new SimHost({
      wifiMac: o.wifiMac ?? '24:0A:C4:10:00:99',
      ...(o.ethernetMac ? { ethernetMac: o.ethernetMac } : {}),
      addresses: o.addresses ?? { ethernet: '127.0.0.2', ap: '127.0.0.3', station: '127.0.0.4' },
      ...(o.air ? { air: o.air } : {}),
      position: () => o.position ?? { x: 0, y: 0 },
      fuseKey: this.fuseKey,
      emit: async (event, payload) => {
        const { reply } = await this.worker.issueCommand(encodeFrame({ type: 'event', event }, payload));
        const frame = decodeFrame(reply).json as { ok: boolean; error?: string };
        if (!frame.ok) this.consoleLines.push(`EVENT FAILED ${event.kind}: ${frame.error}`);
      },
      sntpTime: o.sntpTime ?? (() => Date.now()),
      consoleLine: (line) => this.consoleLines.push(line),
      displayFrame: (lines) => this.frames.push(lines),
      restart: () => this.restarts.push(Date.now()),
      booted: () => undefined,
      fs: (c, payload) => flash.op(c, payload),
      ota: () => {
        throw new Error('no OTA slots in this engine');
      },
      mqttConnect: () => Promise.reject(new Error('no broker')),
      mqttPublish: () => Promise.reject(new Error('no broker')),
      mqttClose: async () => undefined,
      refused: (_iface, socket) => socket.destroy(),
      bound: (iface, url) => {
        if (iface) this.urls[iface] = url;
      },
    });
  }

  static async start(o: SimEngineOptions = {}): Promise<SimEngine> {
    let engine: SimEngine | undefined;
    const worker = await XsWorker.start({
      name: 'sim-engine',
      handleCommand: async (message) => {
        const { json, payload } = decodeFrame(message);
        try {
          const answer = await engine!.host.op(json as Record<string, any>, payload);
          if (answer === null) throw new Error(`unknown host call ${(json as { op: string }).op}`);
          return encodeFrame({ ok: true, value: answer?.value ?? null }, answer?.payload);
        } catch (err) {
          return encodeFrame({ ok: false, error: err instanceof Error ? err.message : String(err) });
        }
      },
      onOutput: (line) => engine?.consoleLines.push(`XS ${line}`),
    });
    engine = new SimEngine(worker, o);
    bundle ??= bundleForSim(ENTRY);
    await worker.evaluate(await bundle);
    return engine;
  }

  /** Runs a script in XS (its synchronous part; what it starts continues with the host's events). */
  async run(code: string): Promise<void> {
    await this.worker.evaluate(code);
  }

  /** The values reported since the last call. */
  async reports(): Promise<any[]> {
    const { reply } = await this.worker.issueCommand(encodeFrame({ type: 'take' }));
    const frame = decodeFrame(reply).json as { ok: boolean; value: unknown[] };
    this.collected.push(...frame.value);
    const all = this.collected;
    this.collected = [];
    return all;
  }

  /** Collects reports until `done(all so far)` holds; throws after `timeoutMs` with what came. */
  async waitFor(done: (reports: any[]) => boolean, timeoutMs = 5000): Promise<any[]> {
    const all: any[] = [];
    const until = Date.now() + timeoutMs;
    for (;;) {
      all.push(...(await this.reports()));
      if (done(all)) return all;
      if (Date.now() > until) throw new Error(`timed out waiting; reports so far: ${JSON.stringify(all).slice(0, 2000)}; console: ${this.consoleLines.slice(-5).join(' | ')}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  expectedHmac(message: Buffer): Buffer {
    return createHmac('sha256', this.fuseKey).update(message).digest();
  }

  async close(): Promise<void> {
    await this.host.close();
    await this.worker.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
