// `fleet farm`: the bench's boards on a labgrid coordinator (docs/board-farm.md).
//   coordinator [--listen host:port]                         labgrid's coordinator from its source ($LABGRID_SOURCE), in the foreground
//   export <rig> --coordinator host:port --name <exporter>   publish a rig's boards; Ctrl-C withdraws them
//   places                                                   the places, their tags, holders and ports
//   reserve --place-tags k=v,… […]                           reserve, acquire and check places for a person
//   release <place…>                                         give places back
// Exit codes: 12 the coordinator cannot be reached, 13 tags that match no place, 14 no place free in
// time, 15 refused (held by another, quarantined, an exporter name in use); 2 usage, 4 a wrong rig.
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { onStopSignals } from '../cli/stop-signals.ts';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';
import type { CommandContext } from './context.ts';

const coordinatorOption = () => new Option('--coordinator <host:port>', 'the labgrid coordinator').env('LG_COORDINATOR').default('127.0.0.1:20408');

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function farmCommand(program: Command, { setExit }: CommandContext): void {
  const farm = program.command('farm').description('Share boards through a labgrid coordinator: export a rig, list, reserve and release places (docs/board-farm.md)');

  farm
    .command('coordinator')
    .description("Run labgrid's coordinator from its source (LABGRID_SOURCE, else ../shared/labgrid beside the repository) on Debian's Python packages, in the foreground; Ctrl-C or SIGTERM stops it")
    .option('--listen <host:port>', 'where it listens', '127.0.0.1:20408')
    .option('--dir <folder>', 'where it keeps its places and resources (places.yaml, resources.yaml) across restarts', 'data/labgrid-coordinator')
    .action(async (o: { listen: string; dir: string }) => {
      const [{ startCoordinator }, { coordinatorAddress }] = await Promise.all([import('../../harness/farm/coordinator.ts'), import('../../harness/farm/client.ts')]);
      const signals = onStopSignals('farm coordinator');
      let running;
      try {
        running = await startCoordinator(coordinatorAddress(o.listen), { dir: resolve(o.dir) });
      } catch (err) {
        signals.dispose();
        throw err;
      }
      process.stderr.write(`farm coordinator: labgrid's coordinator listening on ${running.address} (pid ${running.pid}), its places in ${resolve(o.dir)}; Ctrl-C stops it\n`);
      const why = await Promise.race([signals.stopped.then((s) => `${s}`), running.exited]);
      process.stderr.write(`farm coordinator: ${why}: stopping\n`);
      signals.closing("labgrid's coordinator");
      await running.stop();
      signals.dispose();
      if (!signals.signal) {
        process.stderr.write(running.output().split('\n').slice(-20).join('\n') + '\n');
        setExit(12);
      }
    });

  farm
    .command('export')
    .description("Publish a rig's boards to a labgrid coordinator as NetworkSerialPort resources, one place each; Ctrl-C or SIGTERM withdraws them")
    .argument('<rig>', 'rig file (JSON): virtual boards are started here; physical ones are given as rfc2217:// ports')
    .addOption(coordinatorOption())
    .requiredOption('--name <exporter>', "the exporter's name (its places are <name>-<board>)")
    .option('--flash <inputs...>', "the rig's image: what a quarantined physical board is flashed with before its check (virtual boards get their factory image)")
    .action(async (rigPath: string, o: { coordinator: string; name: string; flash?: string[] }) => {
      const [{ exportRig, exporterName }, { coordinatorAddress }, { loadRig }] = await Promise.all([import('../../harness/farm/export-rig.ts'), import('../../harness/farm/client.ts'), import('../../harness/rig.ts')]);
      const rig = loadRig(resolve(rigPath));
      const name = exporterName(o.name);
      const coordinator = coordinatorAddress(o.coordinator);
      let image;
      if (o.flash) {
        const [{ planFlash }, { productPartitions }] = await Promise.all([import('../../harness/flash/inputs.ts'), import('../../firmware/image/product-partitions.ts')]);
        image = planFlash(o.flash, productPartitions());
      }
      const signals = onStopSignals('farm export');
      const log = (line: string) => process.stderr.write(line + '\n');
      let running;
      try {
        running = await exportRig(rig, { coordinator, name, log, ...(image ? { image } : {}) });
      } catch (err) {
        signals.dispose();
        throw err;
      }
      for (const b of running.boards) process.stdout.write(`place ${b.place} rfc2217=${b.url} ${Object.entries(b.tags).map(([k, v]) => `${k}=${v}`).join(',')}\n`);
      log(`farm export: ${name}: ${running.boards.length} board(s) of rig ${rig.name} published to ${coordinator}; Ctrl-C withdraws them`);
      // Until a signal, or the coordinator ends the registration.
      const ended = new Promise<string>((r) => {
        const t = setInterval(() => running.ended && (clearInterval(t), r(running.ended)), 500);
        void signals.stopped.then(() => clearInterval(t));
      });
      const why = await Promise.race([signals.stopped.then((s) => `${s}`), ended]);
      log(`farm export: ${why}: withdrawing`);
      signals.closing('the places, the resources and the boards');
      await running.stop();
      signals.dispose();
      if (!signals.signal) setExit(12);
    });

  farm
    .command('places')
    .description('List the places: tags, holder, reservation, health comment and serial port')
    .addOption(coordinatorOption())
    .action(async (o: { coordinator: string }) => {
      const [{ ClientSession, sessionName }, { serialPortUrl }] = await Promise.all([import('../../harness/farm/client.ts'), import('../../harness/farm/exporter.ts')]);
      const s = await ClientSession.start(o.coordinator, sessionName());
      try {
        const places = [...s.placesByName.values()].sort((a, b) => (a.name! < b.name! ? -1 : 1));
        if (places.length === 0) process.stdout.write('no places\n');
        for (const p of places) {
          const url = s.resourcesOf(p).map(serialPortUrl).find(Boolean) ?? 'no port';
          const tags = Object.entries(p.tags ?? {}).sort().map(([k, v]) => `${k}=${v}`).join(',');
          process.stdout.write(`${p.name}  ${url}  ${tags}  ${p.acquired ? `held by ${p.acquired}` : 'free'}${p.reservation ? `  reserved ${p.reservation}` : ''}${p.comment ? `  # ${p.comment}` : ''}\n`);
        }
      } finally {
        s.close();
      }
    });

  farm
    .command('reserve')
    .description('Reserve places by tags, acquire them and check their boards; they stay held (by host/user) until fleet farm release')
    .addOption(coordinatorOption())
    .option('--place-tags <tags>', 'one place\'s tags, key=value,… (repeat for more places; later ones on the first one\'s bench)', collect, [])
    .option('--wait <seconds>', 'how long to wait for the places', (v) => Number(v), 600)
    .action(async (o: { coordinator: string; placeTags: string[]; wait: number }) => {
      const [{ FarmLease }, { parsePlaceTags }] = await Promise.all([import('../../harness/farm/reserve.ts'), import('../../harness/farm/tags.ts')]);
      if (o.placeTags.length === 0) throw Object.assign(new Error('fleet farm reserve needs --place-tags key=value,… (once per place)'), { exitCode: EXIT_CODES.usage });
      const places = o.placeTags.map(parsePlaceTags);
      const abort = new AbortController();
      const signals = onStopSignals('farm reserve');
      void signals.stopped.then((s) => abort.abort(s));
      try {
        const lease = await FarmLease.take({ coordinator: o.coordinator, places, waitMs: o.wait * 1000, holder: 'person', signal: abort.signal, say: (l) => process.stderr.write(l + '\n') });
        for (const h of lease.held) process.stdout.write(`place ${h.place} rfc2217=${h.url} reservation=${h.token}\n`);
        lease.keep();
      } finally {
        signals.dispose();
      }
    });

  farm
    .command('release')
    .description('Give places back: released, their reservations cancelled')
    .argument('<places...>')
    .addOption(coordinatorOption())
    .option('--kick', 'release places held by someone else too')
    .action(async (names: string[], o: { coordinator: string; kick?: boolean }) => {
      const [{ ClientSession, sessionName }, { FarmError }, { LEASE_TAG }] = await Promise.all([import('../../harness/farm/client.ts'), import('../../harness/farm/errors.ts'), import('../../harness/farm/tags.ts')]);
      const s = await ClientSession.start(o.coordinator, sessionName());
      try {
        for (const name of names) {
          const p = s.placesByName.get(name);
          if (!p) throw new FarmError('no_match', `no place ${name} on the coordinator at ${o.coordinator} (fleet farm places lists them)`);
          if (p.acquired && p.acquired !== s.name && !o.kick) throw new FarmError('refused', `place ${name} is held by ${p.acquired}, not ${s.name}: release it with --kick if you are sure`);
          if (p.acquired) await s.call('ReleasePlace', { placename: name });
          if (p.reservation) await s.call('CancelReservation', { token: p.reservation }).catch(() => undefined);
          await s.call('SetPlaceTags', { placename: name, tags: { [LEASE_TAG]: '' } });
          process.stdout.write(`released ${name}\n`);
        }
      } finally {
        s.close();
      }
    });
}
