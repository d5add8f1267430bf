// Automatic cloud backup (spec 8): first attempt 30 s after boot, then every
// CLOUD_BACKUP_INTERVAL_SECONDS; skipped silently when /backup.json does not exist.
import type { Timers } from '../../hal/clock.ts';

export class AutoBackup {
  private timer: number | undefined;
  runs = 0;

  constructor(
    private readonly timers: Timers,
    private readonly firstDelayMs: number,
    private readonly intervalMs: number,
    private readonly hasLocalBackup: () => boolean,
    private readonly push: () => Promise<unknown>,
    private readonly log: (level: 'info' | 'warning', message: string) => void,
  ) {}

  start(): void {
    this.schedule(this.firstDelayMs);
  }

  stop(): void {
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(delayMs: number): void {
    this.timer = this.timers.setTimeout(() => void this.run(), delayMs);
  }

  private async run(): Promise<void> {
    this.schedule(this.intervalMs);
    if (!this.hasLocalBackup()) return;
    this.runs++;
    try {
      const result = (await this.push()) as { result?: string };
      this.log('info', `automatic cloud backup: ${result.result ?? 'done'}`);
    } catch (err) {
      this.log('warning', `automatic cloud backup failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
