// `fleet simulate`: a boot storm of simulated devices against a running cloud (tools/simulate/engine.ts,
// docs/fleet-scale.md). Its devices (sim-…) and their backups are removed at the end, also after a
// failure or a signal, unless --keep: a simulation against a real cloud leaves its inventory as it was. Prints progress on stderr, figures on stdout; exit 1 when a device failed a
// step for good (a refusal that is not retried, or the run's deadline), a stored backup is not the
// one its device sent, or (--health) a device's reports are not all stored; exit 3 (tools/fleet.ts)
// when the cloud cannot be reached at all.
import { Command } from 'commander';
import { cloudUrlOption } from '../cli/cloud-url.ts';
import { operatorName } from '../cli/operator.ts';
import { wholeNumber } from '../cli/number-options.ts';
import { onStopSignals } from '../cli/stop-signals.ts';
import type { CommandContext } from './context.ts';

/** Removing thousands of devices after a signal takes longer than closing a port. */
const REMOVE_GRACE_MS = 60_000;

export function simulateCommand(program: Command, { setExit }: CommandContext): void {
  program
    .command('simulate')
    .description('Boot storm: N simulated devices (own P-256 keys, enrolled via the admin API) do an OTA check, a signed backup push and an unchanged (304) push (--health: a boot report and a heartbeat too); then every stored backup (and report) is checked')
    .option('--devices <n>', 'how many devices', wholeNumber, 100)
    .option('--spread <seconds>', 'arrivals spread over this window (0: all at once)', wholeNumber, 0)
    .option('--size <bytes>', 'backup size of most devices', wholeNumber, 64 * 1024)
    .option('--big-every <n>', 'every n-th device pushes --big-size instead (0: none)', wholeNumber, 50)
    .option('--big-size <bytes>', 'the larger backup size', wholeNumber, 512 * 1024)
    .option('--max-skew <seconds>', 'device clocks are off by up to this, either way', wholeNumber, 60)
    .option('--connections <n>', 'connections open at once per cloud URL (default: one per device, at most 4096)', wholeNumber)
    .option('--deadline <seconds>', 'devices retry (back-off, Retry-After) until this long after the storm began, then give up', wholeNumber, 900)
    .option('--health', 'each device also sends a boot report and a heartbeat, signed (docs/device-health.md); every device\'s reports are checked at the end')
    .option('--no-backups', 'no backup pushes: the update check (and with --health, the reports) only')
    .option('--keep', 'keep the simulated devices (sim-…) and their backups in the cloud afterwards (default: removed at the end)')
    .option('--also <url...>', 'more cloud instances; requests go round-robin over --cloud and these', (url: string, previous: string[] = []) => [...previous, cloudUrlOption(url)])
    .action(async (o: { devices: number; spread: number; size: number; bigEvery: number; bigSize: number; maxSkew: number; deadline: number; connections?: number; also?: string[]; keep?: boolean; health?: boolean; backups: boolean }) => {
      const g = program.opts<{ cloud: string; token?: string; as?: string }>();
      const [{ resolveJwtSecret }, { mintToken }, { FleetSimulator, formatResult }] = await Promise.all([
        import('../../cloud/auth/jwt-secret.ts'),
        import('../../cloud/auth/jwt.ts'),
        import('../simulate/engine.ts'),
      ]);
      const adminToken =
        g.token ?? process.env.FLEET_TOKEN ?? (await mintToken(resolveJwtSecret(process.env, { create: false }).secret, { subject: operatorName(g.as), ttlSeconds: 3600 }));
      const sim = new FleetSimulator({
        urls: [g.cloud, ...(o.also ?? [])],
        adminToken,
        devices: o.devices,
        spreadMs: o.spread * 1000,
        sizeBytes: o.size,
        bigEvery: o.bigEvery,
        bigSizeBytes: o.bigSize,
        maxSkewMs: o.maxSkew * 1000,
        deadlineMs: o.deadline * 1000,
        health: o.health === true,
        backups: o.backups,
        ...(o.connections !== undefined ? { connections: o.connections } : {}),
        onProgress: (p) =>
          process.stderr.write(`  ${(p.elapsedMs / 1000).toFixed(0)} s: ${p.devicesDone}/${p.devices} devices done, ${p.requests} requests, ${p.retries} retries, ${p.failures} failures\n`),
      });
      // SIGINT/SIGTERM: the storm stops, and its devices are still removed (a second signal leaves them).
      const signals = onStopSignals('simulate', { graceMs: REMOVE_GRACE_MS });
      void signals.stopped.then((signal) => {
        process.stderr.write(`simulate: ${signal}: stopping the storm${o.keep ? '' : '; the simulated devices will be removed (a second signal leaves them)'}\n`);
        sim.stop();
      });
      try {
        process.stderr.write(`enrolling ${o.devices} devices (${sim.uuidPrefix}*)…\n`);
        await sim.enroll();
        if (!signals.signal) {
          process.stderr.write(`boot storm: ${o.devices} devices${o.spread ? ` over ${o.spread} s` : ', all at once'}\n`);
          const r = await sim.run();
          if (r.stopped) setExit(signals.signal === 'SIGTERM' ? 143 : 130);
          else {
            process.stdout.write(formatResult(r).join('\n') + '\n');
            if (r.errorCount > 0 || r.lost > 0 || (r.health?.lost ?? 0) > 0) setExit(1);
          }
        } else setExit(signals.signal === 'SIGTERM' ? 143 : 130);
      } finally {
        try {
          if (o.keep) process.stderr.write(`simulate: kept the devices ${sim.uuidPrefix}* and their backups (--keep)\n`);
          else {
            signals.closing(`the removal of the devices ${sim.uuidPrefix}*`);
            const { removed, failed } = await sim.removeDevices();
            if (removed > 0) process.stderr.write(`simulate: removed ${removed} simulated devices (${sim.uuidPrefix}*) and their backups\n`);
            if (failed.length) {
              process.stderr.write(`simulate: could not remove ${failed.length}: ${failed.slice(0, 10).join(', ')}${failed.length > 10 ? ', …' : ''}\n`);
              setExit(1);
            }
          }
        } finally {
          sim.close();
          signals.dispose();
        }
      }
    });
}
