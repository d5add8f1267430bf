// `fleet virtual [rig] [board…]`: the rig's virtual boards in the foreground, so that a user flashes,
// monitors and curls one exactly as a real board: one line per board,
//   board <name> console=<pty path> rfc2217=rfc2217://127.0.0.1:<port> ethernet=<url> [softap=<url>]
// (a client shows station=<url> once it has joined the site Wi-Fi), printed again whenever an
// address changes (a reboot gives the listeners new ports; a SoftAP comes and goes). Ctrl-C stops them.
import type { Command } from 'commander';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadRig, RigError } from '../../harness/rig.ts';
import { DEFAULT_RIG } from './bench.ts';

export function virtualCommand(program: Command): void {
  program
    .command('virtual')
    .description("Run a rig's virtual boards in the foreground and print each board's console pty, RFC 2217 URL and interface addresses; Ctrl-C stops them")
    .argument('[rig]', 'rig file (JSON)', DEFAULT_RIG)
    .argument('[boards...]', 'only these boards (ids)')
    .action(async (rigPath: string, only: string[]) => {
      const rig = loadRig(resolve(rigPath));
      const unknown = only.filter((id) => !rig.boards.some((b) => b.id === id));
      if (unknown.length) throw new RigError(`no board ${unknown.join(', ')} on rig ${rig.name} (it has ${rig.boards.map((b) => b.id).join(', ')})`);
      const specs = rig.boards.filter((b) => b.kind === 'virtual' && (only.length === 0 || only.includes(b.id)));
      if (specs.length === 0) throw new RigError(`rig ${rig.name} has no virtual boards to run`);
      const [{ VirtualAir }, { startBroker }, { VirtualBoard }] = await Promise.all([
        import('../../firmware/virtual-esp32/air.ts'),
        import('../../harness/broker.ts'),
        import('../../harness/virtual-board.ts'),
      ]);
      const work = mkdtempSync(join(tmpdir(), 'fleet-virtual-'));
      const air = new VirtualAir();
      air.addInfrastructureAp({ ssid: rig.siteWifi.ssid, password: rig.siteWifi.password, bssid: 'AC:DE:48:00:00:01', position: rig.siteWifi.position });
      const broker = await startBroker('aedes', 0);
      const boards = specs.map((spec) => new VirtualBoard(structuredClone(spec), { air, workDir: work }));
      const shown = new Map<string, string>();
      const describe = (b: InstanceType<typeof VirtualBoard>): string => {
        let urls: Partial<Record<'ethernet' | 'softap' | 'station', string>> = {};
        let softApUp = false;
        try {
          urls = b.engine.urls;
          softApUp = b.engine.softAp !== null;
        } catch {
          // In download mode or halted: no listeners.
        }
        const parts = [`board ${b.spec.id}`, `console=${b.consolePath}`, `rfc2217=${b.rfc2217Url}`];
        if (urls.ethernet) parts.push(`ethernet=${urls.ethernet}`);
        if (urls.softap && softApUp) parts.push(`softap=${urls.softap}`);
        if (urls.station && b.spec.role === 'client') parts.push(`station=${urls.station}`);
        if (b.mode !== 'app') parts.push(`mode=${b.mode}`);
        return parts.join(' ');
      };
      const show = () => {
        for (const b of boards) {
          const line = describe(b);
          if (shown.get(b.spec.id) !== line) process.stdout.write(line + '\n');
          shown.set(b.spec.id, line);
        }
      };
      let ticker: NodeJS.Timeout | undefined;
      try {
        for (const b of boards) {
          await b.start();
          // The console's pseudo-terminal is the user's now (fleet monitor, esptool); the board keeps running.
          await b.releaseConsole();
        }
        process.stderr.write(`virtual: rig ${rig.name}, ${boards.length} board(s) running; broker mqtt://${broker.host}:${broker.port}; Ctrl-C stops them\n`);
        show();
        ticker = setInterval(show, 250);
        await new Promise<void>((done) => {
          process.once('SIGINT', () => done());
          process.once('SIGTERM', () => done());
        });
      } finally {
        clearInterval(ticker);
        process.stderr.write('virtual: stopping\n');
        for (const b of boards) await b.stop().catch(() => undefined);
        await broker.close().catch(() => undefined);
        rmSync(work, { recursive: true, force: true });
      }
    });
}
