// The bench's reading of a virtual board's console (the board itself never reads what its firmware
// prints, as a chip does not): the UART's bytes as lines, the firmware's LOG lines as events, the
// EVT lines that end a boot (core/device.ts boot(), parsed by the console's own module), the factory's
// admin password typed once the firmware takes commands, and a line typed with its OK/ERR answer.
import { parseEventLine, parseLogLine } from '../../src/core/console/lines.ts';

/** How long typeLine waits for a console command's OK/ERR line. */
const TYPE_LINE_TIMEOUT_MS = 30_000;

/** The boot under way: settled by its boot-ending EVT line, or given up on. */
export interface BootWaiter {
  resolve(result: unknown): void;
  reject(err: Error): void;
}

export interface ConsoleReaderOptions {
  /** Bytes typed on UART0's RX pin. */
  send(bytes: Uint8Array): void;
  /** Called for every console line. */
  onLine?: (line: string) => void;
  /** Typed by the factory when the board has no admin password yet (hasAdminPassword says). */
  adminPassword?: string;
  hasAdminPassword(): boolean;
}

export class ConsoleReader {
  readonly lines: string[] = [];
  readonly events: { level: string; source: string; message: string }[] = [];
  /** The factory's password answer: on the console before the board counts as booted. */
  factorySetUp: Promise<void> | undefined;
  private partial = '';
  private boot: { waiter: BootWaiter; client?: Record<string, unknown> } | undefined;

  constructor(private readonly o: ConsoleReaderOptions) {}

  /** A line on the board's UART: the ROM, the bootloader, the firmware, the host's diagnostics. */
  line(line: string): void {
    this.lines.push(line);
    this.o.onLine?.(line);
  }

  /** A new firmware starts: its first bytes begin a line; its boot is waited for. */
  watchBoot(waiter: BootWaiter): void {
    this.partial = '';
    this.boot = { waiter };
  }

  /** Whether a boot is waited for. */
  get booting(): boolean {
    return this.boot !== undefined;
  }

  /** The boot under way is given up on (the firmware ended, a watchdog reset, power off); false when none was. */
  failBoot(err: Error): boolean {
    const boot = this.boot;
    this.boot = undefined;
    boot?.waiter.reject(err);
    return boot !== undefined;
  }

  /** The firmware's UART output. */
  firmwareBytes(bytes: Uint8Array): void {
    const text = this.partial + Buffer.from(bytes).toString('utf8');
    const lines = text.split('\n');
    this.partial = lines.pop() ?? '';
    for (const raw of lines) this.firmwareLine(raw.replace(/\r$/, ''));
  }

  /** Types a line on the serial console; resolves with the firmware's OK/ERR answer line. */
  async typeLine(line: string): Promise<string> {
    const before = this.lines.length;
    this.o.send(new TextEncoder().encode(`${line}\n`));
    const find = () => this.lines.slice(before).find((l) => l.startsWith('OK ') || l.startsWith('ERR ') || l === 'OK');
    const until = Date.now() + TYPE_LINE_TIMEOUT_MS;
    while (!find() && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    const answer = find();
    if (!answer) throw new Error(`no answer to ${JSON.stringify(line.replace(/^password .*/, 'password …'))}`);
    return answer;
  }

  private firmwareLine(line: string): void {
    const logged = parseLogLine(line);
    if (logged) this.events.push({ ...logged, level: logged.level.toLowerCase() });
    this.line(line);
    if (line.startsWith('LOG INFO boot: ') && this.o.adminPassword && !this.o.hasAdminPassword()) {
      // The factory's set-up: the admin password, typed on the console once the firmware takes commands.
      this.factorySetUp = this.typeLine(`password ${this.o.adminPassword}`).then(
        () => undefined,
        () => undefined,
      );
    }
    const failed = /^LOG ERROR board: the firmware did not start: (.*)$/.exec(line);
    if (failed && this.boot) {
      this.failBoot(new Error(`firmware: ${failed[1]}`));
      return;
    }
    const event = this.boot ? parseEventLine(line) : undefined;
    if (event) this.bootEvent(event);
  }

  /** The EVT lines that end a boot (core/device.ts boot()). */
  private bootEvent(event: Record<string, unknown>): void {
    const boot = this.boot!;
    const { event: name, ...rest } = event;
    if (name === 'target_provisioning') {
      this.boot = undefined;
      boot.waiter.resolve({ role: 'controller', provisioning: rest });
    } else if (name === 'client_provisioning' && !boot.client) {
      const provisioning = rest.result;
      if (provisioning === 'configured') boot.client = { role: 'client', provisioning };
      else {
        this.boot = undefined;
        boot.waiter.resolve({ role: 'client', provisioning });
      }
    } else if (name === 'client_normal_mode' && boot.client) {
      this.boot = undefined;
      boot.waiter.resolve({ ...boot.client, normal: rest.result });
    }
  }
}
