// `fleet device health <uuid>` and `fleet firmware health <class> <product_hex> <application> <version>`
// (docs/device-health.md): a device's timeline (its state, its reports newest first: boots with their
// reasons, crashes with their summary, heartbeats, updates; its daily aggregates), and a release's health
// against the previous release, with its rollout's health gate. A table for people, --json for scripts.
import type { Static } from '@sinclair/typebox';
import type { Command } from 'commander';
import type { DeviceHealth } from '../../cloud/schema/api.ts';
import type { DeviceHealthTimeline, ReleaseHealth, ReleaseHealthFigures } from '../../cloud/schema/health.ts';
import type { HealthReport } from '../../cloud/store/types.ts';
import { path } from '../client.ts';
import { wholeNumber } from '../cli/number-options.ts';
import { minute, printJson, table } from '../cli/output.ts';
import { topic, type CommandContext } from './context.ts';

type Timeline = Static<typeof DeviceHealthTimeline>;
type Figures = Static<typeof ReleaseHealthFigures>;

/** Counts of a kind that are not zero, `a 1, b 2`; `none` when all are. */
function nonZero(counts: Record<string, number>): string {
  const listed = Object.entries(counts).filter(([, n]) => n > 0);
  return listed.length ? listed.map(([k, n]) => `${k} ${n}`).join(', ') : 'none';
}

const duration = (seconds: number) => (seconds >= 3600 ? `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`);
const rate = (r: number | null) => (r === null ? '-' : r.toFixed(1));

/** What a report says, in one line. */
export function reportLine(r: HealthReport): string {
  if (r.kind === 'boot') {
    const why = r.crash ? `${r.reason}: ${r.crash.kind}: ${r.crash.message}${r.crash.where ? ` (${r.crash.where})` : ''}` : `${r.reason}${r.by ? ` by ${r.by}` : ''}`;
    const back = r.rolled_back ? `; rolled back from ${r.rolled_back.version} (${r.rolled_back.slot})` : '';
    return `${why}${back}; ${r.slot} ${r.ota}, boot ${r.boots}`;
  }
  if (r.kind === 'heartbeat') {
    return `up ${duration(r.up)}, block ${r.block}, heap_min ${r.heap_min}, rssi ${r.rssi === null ? '-' : `${r.rssi} dBm`}, reboots ${r.reboots}${r.dropped ? `, dropped ${r.dropped}` : ''}`;
  }
  return `${r.version} ${r.outcome}${r.reason ? `: ${r.reason}` : ''}${r.detail ? ` (${r.detail})` : ''}`;
}

/** A device's health, as `fleet device show` and `fleet device health` print it. */
export function healthLines(h: Static<typeof DeviceHealth> | null | undefined): string[] {
  if (!h) return ['  health       no reports'];
  return [
    `  last report  ${h.last_report_at}`,
    `  last boot    ${h.last_boot ? `${h.last_boot.at}  ${h.last_boot.reason} on ${h.last_boot.version}` : '-'}`,
    `  last crash   ${h.last_crash ? `${h.last_crash.at}  ${h.last_crash.kind} on ${h.last_crash.version}${h.last_crash.message ? `: ${h.last_crash.message}` : ''}` : '-'}`,
    `  heap         ${h.heap ? `largest free block ${h.heap.block} bytes, lowest free ${h.heap.heap_min} bytes (${h.heap.at})` : '-'}`,
    `  rssi         ${h.rssi === null ? '-' : `${h.rssi} dBm`}`,
    `  dropped      ${h.dropped ?? '-'}`,
  ];
}

export function formatTimeline(t: Timeline): string {
  const reports = t.reports.length
    ? table(
        ['SEQ', 'RECEIVED', 'KIND', 'FW', 'WHAT'],
        t.reports.map(({ received_at, report }) => [String(report.seq), minute(received_at), report.kind, report.fw, reportLine(report as HealthReport)]),
      )
    : 'no reports\n';
  const days = t.days.length
    ? table(
        ['DAY', 'VERSION', 'BOOTS', 'UNEXPECTED', 'CRASHES', 'HEARTBEATS', 'DEVICE-HOURS', 'MIN BLOCK', 'MIN HEAP', 'MIN RSSI'],
        t.days.map((d) => [d.day, d.version, String(d.boots), nonZero(d.reboots), nonZero(d.crashes), String(d.heartbeats), d.device_hours.toFixed(1), String(d.block_min ?? '-'), String(d.heap_min ?? '-'), String(d.rssi_min ?? '-')]),
      )
    : 'no days\n';
  return [`device ${t.uuid}`, ...healthLines(t.health), '', reports + (t.next_before === null ? '' : `older reports: --before ${t.next_before}\n`), days].join('\n');
}

const figuresLine = (f: Figures) =>
  `${f.devices} devices, ${f.device_hours.toFixed(1)} device-hours, ${f.unexpected_reboots} unexpected reboots (${rate(f.unexpected_per_1000h)} per 1,000 device-hours)`;

export function formatReleaseHealth(h: Static<typeof ReleaseHealth>): string {
  const o = h.outcomes;
  const lines = [
    `health of ${h.class}/${h.product_hex}/${h.application} ${h.version}`,
    `  devices             ${h.devices}${h.crash_free_share === null ? '' : ` (crash-free ${(h.crash_free_share * 100).toFixed(0)} %)`}`,
    `  device-hours        ${h.device_hours.toFixed(1)}`,
    `  unexpected reboots  ${h.unexpected_reboots} (${rate(h.unexpected_per_1000h)} per 1,000 device-hours): ${nonZero(h.reboots)}`,
    `  crashes             ${nonZero(h.crashes)}`,
    `  boots, heartbeats   ${h.boots}, ${h.heartbeats}`,
    `  updates to it       ${o.succeeded} succeeded, ${o.rolled_back} rolled back, failed: ${nonZero(o.failed)}, ${o.in_progress} in progress`,
    `  previous release    ${h.previous ? `${h.previous.version}: ${figuresLine(h.previous)}` : 'none'}`,
  ];
  const g = h.gate;
  if (!g) lines.push('  health gate         no rollout');
  else if (g.health_margin === null) lines.push(`  health gate         off (rollout ${g.state})`);
  else {
    const verdict = !g.judging ? `not judged before ${g.health_min_device_hours} device-hours` : g.over ? 'over the margin' : 'within the margin';
    lines.push(`  health gate         rollout ${g.state}; margin ${g.health_margin} per 1,000 device-hours over the previous release: ${verdict}`);
    if (g.paused_reason) lines.push(`  paused              ${g.paused_reason}`);
  }
  return lines.join('\n') + '\n';
}

export function healthCommands(program: Command, { client }: CommandContext): void {
  const device = topic(program, 'device');
  const firmware = topic(program, 'firmware');
  device
    .command('health')
    .description("A device's health: last boot, last crash, heap, RSSI, reports dropped; its reports newest first (boots with reasons, crashes with their summary, heartbeats, updates); its daily aggregates")
    .argument('<uuid>')
    .option('--limit <n>', 'reports (default 100, at most 1000)', wholeNumber)
    .option('--before <seq>', 'reports older than this seq (the next page)', wholeNumber)
    .option('--days <n>', 'daily aggregates of the last n days (default 30)', wholeNumber)
    .option('--json', 'the API answer as JSON (for scripts)')
    .action(async (uuid: string, o: { limit?: number; before?: number; days?: number; json?: boolean }) => {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries({ limit: o.limit, before: o.before, days: o.days })) if (v !== undefined) query.set(k, String(v));
      const t = (await client().request('GET', `${path('admin', 'devices', uuid, 'health')}${query.size ? `?${query}` : ''}`)).body as Timeline;
      if (o.json) printJson(t);
      else process.stdout.write(formatTimeline(t));
    });

  firmware
    .command('health')
    .description("A release's health: devices, device-hours, unexpected reboots per 1,000 device-hours, crash-free share, update outcomes; the previous release's; the rollout's health gate")
    .argument('<class>')
    .argument('<product_hex>')
    .argument('<application>')
    .argument('<version>')
    .option('--json', 'the API answer as JSON (for scripts)')
    .action(async (c: string, p: string, a: string, v: string, o: { json?: boolean }) => {
      const h = (await client().request('GET', path('admin', 'firmware', c, p, a, v, 'health'))).body as Static<typeof ReleaseHealth>;
      if (o.json) printJson(h);
      else process.stdout.write(formatReleaseHealth(h));
    });
}
