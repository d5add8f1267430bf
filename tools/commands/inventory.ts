// `fleet device list|show|versions|label|groups` (the device inventory, docs/device-inventory.md), `fleet rollout …`
// (staged rollouts, docs/staged-rollouts.md) and `fleet audit` (who changed what). Each prints a table
// for people, or the API's JSON with --json for scripts.
import type { Static } from '@sinclair/typebox';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { LOW_HEAP_DEFAULT_BYTES } from '../../cloud/health-definitions.ts';
import type { AuditList, Device, DeviceVersions, Rollout, RolloutDeviceList } from '../../cloud/schema/api.ts';
import { scheduleText } from '../../cloud/ota/schedule-text.ts';
import { path } from '../client.ts';
import { wholeNumber } from '../cli/number-options.ts';
import { minute, printJson, table } from '../cli/output.ts';
import { healthLines } from './health.ts';
import { topic, type CommandContext } from './context.ts';

type DeviceView = Static<typeof Device> & { groups: string[] };

function deviceRows(devices: DeviceView[]): string {
  return table(
    ['UUID', 'VERSION', 'TRACK', 'LAST CHECK', 'LAST BACKUP', 'GROUPS', 'LABEL'],
    devices.map((d) => [
      d.uuid,
      d.last_check?.version ?? '-',
      d.last_check ? `${d.last_check.class}/${d.last_check.product_hex}/${d.last_check.application}` : '-',
      minute(d.last_check?.at),
      minute(d.backup?.last_backup_date),
      d.groups.join(',') || '-',
      d.label ?? '',
    ]),
  );
}

/** The inventory with its health (--health, --crashed-days, --low-heap): last boot and crash, heap headroom, RSSI, reports dropped. */
function healthRows(devices: DeviceView[]): string {
  return table(
    ['UUID', 'VERSION', 'LAST BOOT', 'LAST CRASH', 'BLOCK', 'HEAP MIN', 'RSSI', 'DROPPED'],
    devices.map(({ uuid, last_check, health: h }) => [
      uuid,
      last_check?.version ?? '-',
      h?.last_boot ? `${minute(h.last_boot.at)} ${h.last_boot.reason}` : '-',
      h?.last_crash ? `${minute(h.last_crash.at)} ${h.last_crash.kind}` : '-',
      String(h?.heap?.block ?? '-'),
      String(h?.heap?.heap_min ?? '-'),
      String(h?.rssi ?? '-'),
      String(h?.dropped ?? '-'),
    ]),
  );
}

/** Devices per version per track: one row a version, newest first, with its share of the track's devices. */
export function versionRows(body: Static<typeof DeviceVersions>): string {
  if (body.tracks.length === 0) return 'no device has checked for updates on a track\n';
  const rows: string[][] = [];
  for (const t of body.tracks) {
    for (const v of t.versions) {
      rows.push([`${t.class}/${t.product_hex}/${t.application}`, v.version, String(v.devices), `${Math.round((100 * v.devices) / t.devices)} %`, v.status ?? 'not released']);
    }
  }
  return table(['TRACK', 'VERSION', 'DEVICES', 'SHARE', 'STATUS'], rows);
}

interface ListOptions {
  class?: string;
  productHex?: string;
  application?: string;
  version?: string;
  notSeenDays?: number;
  notBackedUpDays?: number;
  search?: string;
  group?: string;
  crashedDays?: number;
  lowHeap?: number | true;
  behind?: boolean;
  failedUpdate?: boolean;
  any?: boolean;
  health?: boolean;
  limit?: number;
  all?: boolean;
  json?: boolean;
}

export function inventoryCommands(program: Command, { client }: CommandContext): void {
  const device = topic(program, 'device');
  device
    .command('remove')
    .description('Remove a device; its stored backup is kept')
    .argument('<uuid>')
    .action(async (uuid: string) => {
      await client().request('DELETE', path('admin', 'devices', uuid));
      process.stdout.write(`removed ${uuid}\n`);
    });
  device
    .command('list')
    .description('The device inventory: enrolment, last OTA check, last backup, groups. Conditions given together must all hold, --any: at least one (stragglers: --not-seen-days N --not-backed-up-days N --any)')
    .option('--class <class>', 'last checked on this hardware class')
    .option('--product-hex <hex>', 'last checked on this product')
    .option('--application <app>', 'last checked for this application')
    .option('--version <YYYY.MM.bb>', 'reported this version at its last check')
    .option('--not-seen-days <n>', 'no OTA check for n days (or never)', wholeNumber)
    .option('--not-backed-up-days <n>', 'no backup for n days (or none)', wholeNumber)
    .option('--search <text>', 'a part of the UUID or label')
    .option('--group <name>', 'in this group')
    .option('--crashed-days <n>', 'an unexpected reboot in the last n days (docs/device-health.md)', wholeNumber)
    .option('--low-heap [bytes]', `the last heartbeat's largest free block below this (default ${LOW_HEAP_DEFAULT_BYTES})`, wholeNumber)
    .option('--behind', 'reported a version older than the newest released one of its track')
    .option('--failed-update', 'its latest update failed (the release it was offered last)')
    .option('--any', 'devices that meet any of the conditions given (--not-seen-days, --not-backed-up-days, --crashed-days, --low-heap, --behind, --failed-update); without it, devices that meet them all (both, for two)')
    .option('--health', 'show health columns (last boot, last crash, heap, RSSI, reports dropped); implied by --crashed-days and --low-heap')
    .option('--limit <n>', 'devices per page (default 1000)', wholeNumber)
    .option('--all', 'every page, not only the first')
    .option('--json', 'the API answer as JSON (for scripts)')
    .action(async (o: ListOptions, cmd: Command) => {
      if (o.any && o.notSeenDays === undefined && o.notBackedUpDays === undefined && o.crashedDays === undefined && o.lowHeap === undefined && !o.behind && !o.failedUpdate) {
        cmd.error('error: --any combines conditions: give at least one of --not-seen-days, --not-backed-up-days, --crashed-days, --low-heap, --behind, --failed-update');
      }
      const query = new URLSearchParams();
      const set = (k: string, v: string | number | undefined) => v !== undefined && query.set(k, String(v));
      set('class', o.class);
      set('product_hex', o.productHex);
      set('application', o.application);
      set('version', o.version);
      set('not_seen_days', o.notSeenDays);
      set('no_backup_days', o.notBackedUpDays);
      set('search', o.search);
      set('group', o.group);
      set('crashed_days', o.crashedDays);
      set('low_heap', o.lowHeap === true ? LOW_HEAP_DEFAULT_BYTES : o.lowHeap);
      set('limit', o.limit);
      if (o.behind) query.set('behind', 'true');
      if (o.failedUpdate) query.set('failed_update', 'true');
      if (o.any) query.set('match', 'any');
      const devices: DeviceView[] = [];
      let nextAfter: string | null = null;
      do {
        if (nextAfter) query.set('after', nextAfter);
        const body = (await client().request('GET', query.toString() ? `/admin/devices?${query}` : '/admin/devices')).body as { devices: DeviceView[]; next_after: string | null };
        devices.push(...body.devices);
        nextAfter = o.all ? body.next_after : null;
        if (!o.all && body.next_after) process.stderr.write(`more devices: --all, or --limit; next page after ${body.next_after}\n`);
      } while (nextAfter);
      const withHealth = o.health || o.crashedDays !== undefined || o.lowHeap !== undefined;
      if (o.json) printJson({ devices });
      else process.stdout.write(devices.length === 0 ? 'no devices\n' : withHealth ? healthRows(devices) : deviceRows(devices));
    });

  device
    .command('show')
    .description('One device: enrolment, groups, last OTA check and the version it was offered, last backup, health')
    .argument('<uuid>')
    .option('--json', 'the API answer as JSON')
    .action(async (uuid: string, o: { json?: boolean }) => {
      const d = (await client().request('GET', path('admin', 'devices', uuid))).body as DeviceView & { public_key: string };
      if (o.json) return printJson(d);
      const lines = [
        `device ${d.uuid}${d.label ? `  (${d.label})` : ''}`,
        `  enrolled     ${d.enrolled_at}`,
        `  groups       ${d.groups.join(', ') || '-'}`,
        `  last check   ${d.last_check ? `${d.last_check.at}  ${d.last_check.version} on ${d.last_check.class}/${d.last_check.product_hex}/${d.last_check.application}` : 'never'}`,
        `  offered      ${d.offer ? `${d.offer.version} (from ${d.offer.from_version}) at ${d.offer.at}` : '-'}`,
        `  last backup  ${d.backup ? `${d.backup.last_backup_date}  ${d.backup.size} bytes  ETag ${d.backup.etag ?? '-'}` : 'none'}`,
        ...healthLines(d.health),
      ];
      process.stdout.write(lines.join('\n') + '\n');
    });

  device
    .command('versions')
    .description('How many devices run each version, per track (from their last OTA check), newest version first; a device that never checked is on no track')
    .option('--class <class>', 'only this hardware class')
    .option('--product-hex <hex>', 'only this product')
    .option('--application <app>', 'only this application')
    .option('--json', 'the API answer as JSON')
    .action(async (o: { class?: string; productHex?: string; application?: string; json?: boolean }) => {
      const query = new URLSearchParams();
      if (o.class !== undefined) query.set('class', o.class);
      if (o.productHex !== undefined) query.set('product_hex', o.productHex);
      if (o.application !== undefined) query.set('application', o.application);
      const body = (await client().request('GET', query.size ? `/admin/device-versions?${query}` : '/admin/device-versions')).body as Static<typeof DeviceVersions>;
      if (o.json) return printJson(body);
      process.stdout.write(versionRows(body));
    });

  device
    .command('label')
    .description("Set a device's label (a note for people: where it is, what it drives), or clear it with --clear")
    .argument('<uuid>')
    .argument('[text]', 'the new label, at most 200 characters')
    .option('--clear', 'remove the label')
    .action(async (uuid: string, text: string | undefined, o: { clear?: boolean }, cmd: Command) => {
      if ((text === undefined) === !o.clear) cmd.error(text === undefined ? 'error: give the label text, or --clear to remove the label' : 'error: give the label text or --clear, not both');
      const d = (await client().request('PUT', path('admin', 'devices', uuid, 'label'), { label: o.clear ? null : text })).body as DeviceView;
      process.stdout.write(d.label ? `${d.uuid}: label ${d.label}\n` : `${d.uuid}: no label\n`);
    });

  device
    .command('groups')
    .description("Replace a device's groups (a staged rollout may target groups); none to clear")
    .argument('<uuid>')
    .argument('[group...]')
    .action(async (uuid: string, groups: string[]) => {
      const d = (await client().request('PUT', path('admin', 'devices', uuid, 'groups'), { groups })).body as DeviceView;
      process.stdout.write(`${d.uuid}: ${d.groups.join(', ') || 'no groups'}\n`);
    });
}

type RolloutView = Static<typeof Rollout>;

export function formatRollout(r: RolloutView): string {
  const schedule = scheduleText(r) ? `, ${scheduleText(r)}` : '';
  return [
    `rollout of ${r.version}: ${r.state.toUpperCase()} at ${r.effective_percent} %${schedule}${r.groups.length ? `, groups ${r.groups.join(', ')}` : ''}`,
    `  outcomes: ${r.outcomes.succeeded} succeeded, ${r.outcomes.failed} failed, ${r.outcomes.pending} pending (pauses at ${r.error_threshold_percent} % failed of at least ${r.min_reports})`,
    ...(r.health_margin === null
      ? []
      : [`  health gate: pauses when unexpected reboots per 1,000 device-hours exceed the previous release's by more than ${r.health_margin}, from ${r.health_min_device_hours} device-hours`]),
    ...(r.next_step ? [`  next step: ${r.next_step.percent} % at ${r.next_step.at}`] : []),
    ...(r.paused_reason ? [`  paused: ${r.paused_reason}`] : []),
  ].join('\n') + '\n';
}

/**
 * The rollout a release just started (`fleet firmware release … --rollout-percent 10`): whom it reaches,
 * its next step (as the cloud's schedule has it), and when it pauses by itself.
 */
export function formatStartedRollout(r: RolloutView, track: [string, string, string]): string {
  const reach = [r.percent > 0 || r.groups.length === 0 ? `${r.percent} % of devices (a stable share by UUID)` : '', r.groups.length ? `groups ${r.groups.join(', ')}` : ''].filter(Boolean).join(' and ');
  const release = `${track.join(' ')} ${r.version}`;
  let next: string;
  if (r.effective_percent >= 100) next = 'none: it reaches every device';
  else if (r.next_step) next = `${r.next_step.percent} % at ${r.next_step.at} (${scheduleText(r)} until 100 %)`;
  else next = `by hand, no schedule: fleet rollout set ${release} --percent <n>; fleet rollout end ${release} releases it to every device`;
  return [
    `rollout of ${r.version}: ${r.state.toUpperCase()} at ${r.effective_percent} %, offered to ${reach}`,
    `  next step: ${next}`,
    `  pauses by itself when failed installs reach ${r.error_threshold_percent} % of at least ${r.min_reports} outcomes (fleet rollout show ${release})`,
  ].join('\n') + '\n';
}

/** `--health-margin`: a number of unexpected reboots per 1,000 device-hours, or `off` (kept as the word: commander turns a null into ''). */
function healthMargin(value: string): number | 'off' {
  if (value === 'off') return value;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(n)) throw new InvalidArgumentError(`must be a number (unexpected reboots per 1,000 device-hours) or off: ${value}`);
  return n;
}

export function rolloutCommands(program: Command, { client }: CommandContext): void {
  const rollout = program.command('rollout').description('Staged rollouts of a release: show, set (start or raise), pause, resume, end');
  const release = (cmd: Command) => cmd.argument('<class>').argument('<product_hex>').argument('<application>').argument('<version>').option('--json', 'the API answer as JSON');
  const show = (o: { json?: boolean }, body: unknown) => (o.json ? printJson(body) : process.stdout.write(formatRollout(body as RolloutView)));

  release(rollout.command('show').description('The rollout and its update outcomes')).action(async (c: string, p: string, a: string, v: string, o: { json?: boolean }) => {
    show(o, (await client().request('GET', path('admin', 'firmware', c, p, a, v, 'rollout'))).body);
  });
  release(rollout.command('devices').description("The devices behind a release's update outcomes, by UUID (every page); --outcome picks one kind"))
    .addOption(new Option('--outcome <outcome>', 'only these devices').choices(['pending', 'succeeded', 'failed']))
    .action(async (c: string, p: string, a: string, v: string, o: { json?: boolean; outcome?: string }) => {
      type Listed = Static<typeof RolloutDeviceList>['devices'][number];
      const devices: Listed[] = [];
      for (let after: string | null = null; ; ) {
        const query = new URLSearchParams({ limit: '1000', ...(o.outcome ? { outcome: o.outcome } : {}), ...(after ? { after } : {}) });
        const page = (await client().request('GET', `${path('admin', 'firmware', c, p, a, v, 'rollout', 'devices')}?${query}`)).body as Static<typeof RolloutDeviceList>;
        devices.push(...page.devices);
        if (!page.next_after) break;
        after = page.next_after;
      }
      if (o.json) return printJson({ devices });
      if (devices.length === 0) return void process.stdout.write(`no devices${o.outcome ? ` with outcome ${o.outcome}` : ''} for ${v}\n`);
      process.stdout.write(table(['UUID', 'OUTCOME', 'FROM', 'OFFERED', 'SETTLED', 'ATTEMPTS'], devices.map((d) => [d.uuid, d.outcome, d.from_version, minute(d.offered_at), d.settled_at ? minute(d.settled_at) : '-', String(d.attempts)])));
    });
  release(rollout.command('set').description('Start a rollout, or change the settings given (the others are kept)'))
    .option('--percent <n>', 'devices whose stable bucket is below this percentage', wholeNumber)
    .option('--groups <group...>', 'devices in these groups')
    .option('--step-percent <n>', 'raise by this much…', wholeNumber)
    .option('--step-every <seconds>', '…every so many seconds', wholeNumber)
    .option('--no-schedule', 'raise by hand only')
    .option('--error-threshold <percent>', 'pause when failed installs reach this share', wholeNumber)
    .option('--min-reports <n>', '…once this many outcomes are in', wholeNumber)
    .option('--health-margin <n>', "the health gate: pause when unexpected reboots per 1,000 device-hours exceed the previous release's by more than n (off: turn it off)", healthMargin)
    .option('--health-min-hours <h>', '…once the release has run this many device-hours (default 100)', wholeNumber)
    .action(async (c: string, p: string, a: string, v: string, o: { json?: boolean; percent?: number; groups?: string[]; stepPercent?: number; stepEvery?: number; schedule: boolean; errorThreshold?: number; minReports?: number; healthMargin?: number | 'off'; healthMinHours?: number }) => {
      const body: Record<string, unknown> = {};
      if (o.percent !== undefined) body.percent = o.percent;
      if (o.groups) body.groups = o.groups;
      if (o.stepPercent !== undefined) body.step_percent = o.stepPercent;
      if (o.stepEvery !== undefined) body.step_every_seconds = o.stepEvery;
      if (!o.schedule) Object.assign(body, { step_percent: null, step_every_seconds: null });
      if (o.errorThreshold !== undefined) body.error_threshold_percent = o.errorThreshold;
      if (o.minReports !== undefined) body.min_reports = o.minReports;
      if (o.healthMargin !== undefined) body.health_margin = o.healthMargin === 'off' ? null : o.healthMargin;
      if (o.healthMinHours !== undefined) body.health_min_device_hours = o.healthMinHours;
      show(o, (await client().request('PUT', path('admin', 'firmware', c, p, a, v, 'rollout'), body)).body);
    });
  for (const action of ['pause', 'resume'] as const) {
    release(rollout.command(action).description(action === 'pause' ? 'Nobody new is offered the release' : 'Offer it again; the schedule counts from now')).action(
      async (c: string, p: string, a: string, v: string, o: { json?: boolean }) => {
        show(o, (await client().request('POST', path('admin', 'firmware', c, p, a, v, 'rollout', action))).body);
      },
    );
  }
  rollout
    .command('end')
    .description('End the rollout: every device is answered as the spec says')
    .argument('<class>')
    .argument('<product_hex>')
    .argument('<application>')
    .argument('<version>')
    .action(async (c: string, p: string, a: string, v: string) => {
      await client().request('DELETE', path('admin', 'firmware', c, p, a, v, 'rollout'));
      process.stdout.write(`rollout of ${v} ended: released to every device\n`);
    });
}

/** A date alone (2026-11-28) is that day's start in UTC; anything else goes to the cloud as written, which checks it. */
function isoTime(value: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
}

export function auditCommand(program: Command, { client }: CommandContext): void {
  program
    .command('audit')
    .description('The audit log: who changed what, newest first')
    .option('--limit <n>', 'entries (default 50)', wholeNumber, 50)
    .option('--who <name>', "one operator's entries (as the WHO column shows them; system for the cloud's own)")
    .option('--action <name>', 'one action (as the ACTION column shows it, such as pauseRollout)')
    .option('--since <time>', 'entries at or after this time (ISO 8601: 2026-11-28 or 2026-11-28T09:00:00Z)')
    .option('--until <time>', 'entries before this time (ISO 8601)')
    .option('--json', 'the API answer as JSON')
    .action(async (o: { limit: number; who?: string; action?: string; since?: string; until?: string; json?: boolean }) => {
      const query = new URLSearchParams({ limit: String(o.limit) });
      if (o.who !== undefined) query.set('actor', o.who);
      if (o.action !== undefined) query.set('action', o.action);
      if (o.since !== undefined) query.set('since', isoTime(o.since));
      if (o.until !== undefined) query.set('until', isoTime(o.until));
      const body = (await client().request('GET', `/admin/audit?${query}`)).body as Static<typeof AuditList>;
      if (o.json) return printJson(body);
      process.stdout.write(table(['AT', 'WHO', 'VIA', 'ACTION', 'STATUS', 'PATH'], body.entries.map((e) => [e.at, e.actor, e.via, e.action, String(e.status), e.path])));
    });
}
