// Stock labgrid interoperates with the farm both ways, on one coordinator from the shared source:
// - labgrid-client reserves a board our exporter publishes by its tags, acquires it, opens its console
//   (telnet to the RFC 2217 port, as labgrid-client does without microcom) and gets the firmware's
//   answer to `status`, then releases it;
// - labgrid's own exporter publishes two virtual boards' RFC 2217 ports from its YAML, labgrid-client
//   makes and tags their places, and `fleet bench --farm` reserves, checks and runs the two-board
//   provisioning scenario on them, then releases them.
import { type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { spawnLabgrid } from '../../harness/farm/coordinator.ts';
import { loadRig } from '../../harness/rig.ts';
import { VirtualBoard } from '../../harness/virtual-board.ts';
import { FARM_RIG, isFree, placesNow, resourcesNow, until, useFarm } from '../helpers/farm.ts';
import { runFleet } from '../helpers/fleet-cli.ts';

const farm = useFarm('ours');
const dir = mkdtempSync(join(tmpdir(), 'farm-interop-'));
const started: { stop(): Promise<unknown> }[] = [];
afterAll(async () => {
  for (const s of started.reverse()) await s.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** The labgrid identity of the stock client here: host/user. */
const LG_ENV = { LG_HOSTNAME: 'ci-host', LG_USERNAME: 'stock' };

const onPath = (command: string) => (process.env.PATH ?? '').split(delimiter).some((d) => d && existsSync(join(d, command)));

interface Ran {
  code: number | null;
  out: string;
}

/** labgrid-client with arguments, to its end (or killed at the deadline). */
function labgridClient(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Ran> {
  const child = spawnLabgrid('labgrid.remote.client', ['-x', farm.coordinator.address, ...args], { env: { ...LG_ENV, ...env } });
  child.stdin!.end();
  return collect(child, timeoutMs);
}

function collect(child: ChildProcess, timeoutMs: number): Promise<Ran> {
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((r) => child.on('close', (code) => (clearTimeout(timer), r({ code, out }))));
}

describe('stock labgrid-client on a place our exporter publishes', () => {
  it('reserves it by tags, acquires it, opens its console and releases it', { timeout: 120_000 }, async () => {
    const reserved = await labgridClient(['reserve', '--wait', '--shell', 'role=controller', 'build=debug', 'bench=ours']);
    expect(reserved.code, reserved.out).toBe(0);
    const token = /export LG_TOKEN=(\w+)/.exec(reserved.out)![1]!;
    const acquired = await labgridClient(['-p', '+', 'acquire'], { LG_TOKEN: token });
    expect(acquired.code, acquired.out).toBe(0);
    expect(acquired.out).toContain('acquired place ours-source');
    expect((await placesNow(farm.coordinator.address)).get('ours-source')?.acquired).toBe('ci-host/stock');

    // labgrid-client's console runs microcom, or telnet without it (.ci/run installs telnet).
    if (!['microcom', 'telnet'].some(onPath)) throw new Error('labgrid-client console needs microcom or telnet on PATH: apt-get install telnet');
    const console = spawnLabgrid('labgrid.remote.client', ['-x', farm.coordinator.address, '-p', '+', 'console'], { env: { ...LG_ENV, LG_TOKEN: token } });
    const seen = collect(console, 60_000);
    let out = '';
    console.stdout!.on('data', (c) => (out += c));
    try {
      await until('the console connects', () => /Connected to 127\.0\.0\.1/.test(out), 30_000, 100);
      // The firmware's console: one command a line (its answer may follow a line of the boot).
      await until('the firmware answers status', () => {
        console.stdin!.write('status\r\n');
        return /OK \{"uuid":"5c0e1a00-0000-4000-8000-000000000061","role":"controller"[^\n]*"build":"debug"/.test(out);
      }, 30_000, 1_000);
    } finally {
      console.kill('SIGTERM');
      await seen;
    }

    const released = await labgridClient(['-p', '+', 'release'], { LG_TOKEN: token });
    expect(released.code, released.out).toBe(0);
    await labgridClient(['cancel-reservation'], { LG_TOKEN: token });
    await until('the place is free', async () => isFree((await placesNow(farm.coordinator.address)).get('ours-source')), 20_000);
  });
});

describe("fleet bench --farm on places a stock labgrid exporter publishes", () => {
  it('runs the two-board provisioning scenario on the virtual boards behind it and releases them', { timeout: 300_000 }, async () => {
    // Two virtual boards of the farm rig, reachable only at their RFC 2217 ports.
    const rig = loadRig(FARM_RIG);
    const air = new VirtualAir();
    air.addInfrastructureAp({ ssid: rig.siteWifi.ssid, password: rig.siteWifi.password, bssid: 'AC:DE:48:00:00:01', position: rig.siteWifi.position });
    const yaml: string[] = [];
    for (const spec of rig.boards) {
      const b = new VirtualBoard(structuredClone(spec), { air, workDir: dir });
      started.push(b);
      await b.start();
      await b.releaseConsole();
      const port = Number(/:(\d+)$/.exec(b.rfc2217Url)![1]);
      yaml.push(`${spec.id}:\n  NetworkSerialPort:\n    host: 127.0.0.1\n    port: ${port}\n    speed: 115200\n    protocol: rfc2217`);
    }
    const config = join(dir, 'exporter.yaml');
    writeFileSync(config, yaml.join('\n') + '\n');
    const exporter = spawnLabgrid('labgrid.remote.exporter', ['-c', farm.coordinator.address, '-n', 'stock', '--hostname', '127.0.0.1', config], { cwd: dir });
    const exporterEnded = collect(exporter, 600_000);
    started.push({ stop: async () => (exporter.kill('SIGTERM'), await exporterEnded) });
    await until("the stock exporter's resources are listed", async () => (await resourcesNow(farm.coordinator.address)).filter((r) => r.startsWith('stock/')).length === 2, 60_000, 250);

    // Their places, made and tagged with labgrid-client as a farm's admin would.
    const tags: Record<string, string[]> = { source: ['role=controller', 'build=debug', 'mac=24:0a:c4:10:00:60'], target: ['role=controller', 'build=production', 'mac=24:0a:c4:10:00:70'] };
    for (const id of ['source', 'target']) {
      for (const args of [['create'], ['add-match', `stock/${id}/NetworkSerialPort`], ['set-tags', 'chip=esp32s3', 'bench=stock', 'health=ok', ...tags[id]!]]) {
        const r = await labgridClient(['-p', `stock-${id}`, ...args]);
        expect(r.code, `${args[0]}: ${r.out}`).toBe(0);
      }
    }

    const report = join(dir, 'report');
    const run = await runFleet(
      ['bench', '--farm', farm.coordinator.address, '--place-tags', 'role=controller,build=debug,bench=stock', '--place-tags', 'role=controller,build=production', '--scenario', 'controller-ok-backup', '--no-figures', '--report', report, '--farm-wait', '120'],
      { timeoutMs: 280_000 },
    );
    expect(run.stdout + run.stderr).toMatch(/PASS\s+controller-ok-backup/);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/farm: acquired stock-source \(rfc2217:\/\/127\.0\.0\.1:\d+\)/);
    expect(run.stderr).toMatch(/farm: acquired stock-target \(rfc2217:\/\/127\.0\.0\.1:\d+\)/);
    const places = await placesNow(farm.coordinator.address);
    expect(['stock-source', 'stock-target'].filter((n) => !isFree(places.get(n)))).toEqual([]);
  });
});
