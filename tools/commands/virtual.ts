// `fleet virtual [rig] [board…]`: the rig's virtual boards in the foreground, so that a user flashes,
// monitors and curls one exactly as a real board: one line per board,
//   board <name> console=<pty path> rfc2217=rfc2217://127.0.0.1:<port> ethernet=<url> [softap=<url>]
// (a client shows station=<url> once it has joined the site Wi-Fi), printed again whenever an
// address changes (a reboot gives the listeners new ports; a SoftAP comes and goes). SIGINT (Ctrl-C)
// or SIGTERM stops them within seconds, at any time: boards, ptys, listeners and the broker closed.
// With --secure-boot-key the boards' chips have Secure Boot v2 on (docs/secure-boot.md): each key's
// digest burned as SECURE_BOOT_DIGEST0.., SECURE_BOOT_EN, and the factory images signed with the
// first key; --anti-rollback and --secure-version set up anti-rollback.
import type { Command } from 'commander';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { killHelperProcesses } from '../../harness/child-process.ts';
import { RigError } from '../../harness/rig-error.ts';
import type { VirtualSecureBoot } from '../../harness/virtual-board.ts';
import type { Broker } from '../../harness/broker.ts';
import { secureVersionNumber } from '../cli/number-options.ts';
import { onStopSignals, type StopSignals } from '../cli/stop-signals.ts';
import { loadSigningKey, loadVerifyingKey } from '../signing-keys.ts';
import { DEFAULT_RIG } from './bench.ts';
import { EXIT_CODES } from '../../cloud/exit-codes.ts';
import type { CommandContext } from './context.ts';

export function virtualCommand(program: Command, _ctx: CommandContext): void {
  program
    .command('virtual')
    .description("Run a rig's virtual boards in the foreground and print each board's console pty, RFC 2217 URL and interface addresses; Ctrl-C stops them")
    .argument('[rig]', 'rig file (JSON)', DEFAULT_RIG)
    .argument('[boards...]', 'only these boards (ids)')
    .option('--secure-boot-key <pem>', 'turn Secure Boot v2 on: burn this RSA-3072 key\'s digest (repeat for up to 3 keys, SECURE_BOOT_DIGEST0..2) and SECURE_BOOT_EN; the first must be a private key: it signs the factory bootloader and app', collect, [])
    .option('--anti-rollback', 'the boards\' bootloader is built with CONFIG_BOOTLOADER_APP_ANTI_ROLLBACK')
    .option('--secure-version <n>', 'burn SECURE_VERSION n (0 to 16) and give the factory app secure_version n', secureVersionNumber)
    .action(async (rigPath: string, only: string[], o: { secureBootKey: string[]; antiRollback?: boolean; secureVersion?: number }) => {
      const secureBoot = secureBootOptions(o);
      // From the start: a signal while the boards start stops them too (docs/stop-signals.md).
      const signals = onStopSignals('virtual');
      try {
        await runVirtual(rigPath, only, signals, secureBoot);
      } finally {
        signals.dispose();
      }
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A key the user named that is not one the chip can use, or a first key without its private half: exit 2. */
class SecureBootKeyError extends Error {
  override name = 'SecureBootKeyError';
  readonly exitCode = EXIT_CODES.usage;
}

/** The options' keys read and checked (RSA-3072, PEM; the first private), before any board starts. */
function secureBootOptions(o: { secureBootKey: string[]; antiRollback?: boolean; secureVersion?: number }): VirtualSecureBoot | undefined {
  if (o.secureBootKey.length === 0 && !o.antiRollback && o.secureVersion === undefined) return undefined;
  if (o.secureBootKey.length > 3) throw new SecureBootKeyError(`--secure-boot-key: the chip has 3 key digest slots, ${o.secureBootKey.length} keys given`);
  const keys = o.secureBootKey.map((path, i) => {
    const at = { what: 'the secure boot key', name: `--secure-boot-key ${path}`, encrypted: 'give it without a passphrase (openssl pkey -in it -out plain.pem)' };
    // The first key signs the factory bootloader and app; the others only have their digests burned.
    return i === 0 ? loadSigningKey(path, undefined, { ...at, publicKey: 'the first key signs the factory images, so it must be the private key' }) : loadVerifyingKey(path, undefined, at);
  });
  const digests = keys.map((k) => k.digest);
  const twice = digests.findIndex((d, i) => digests.indexOf(d) !== i);
  if (twice >= 0) throw new SecureBootKeyError(`--secure-boot-key ${o.secureBootKey[twice]}: the same key as ${o.secureBootKey[digests.indexOf(digests[twice]!)]}`);
  return { keys: keys.map((k) => k.key), ...(o.antiRollback ? { antiRollback: true } : {}), ...(o.secureVersion !== undefined ? { secureVersion: o.secureVersion } : {}) };
}

async function runVirtual(rigPath: string, only: string[], signals: StopSignals, secureBoot: VirtualSecureBoot | undefined): Promise<void> {
  const { loadRig } = await import('../../harness/rig.ts');
  const rig = loadRig(resolve(rigPath));
  const unknown = only.filter((id) => !rig.boards.some((b) => b.id === id));
  if (unknown.length) throw new RigError(`no board ${unknown.join(', ')} on rig ${rig.name} (it has ${rig.boards.map((b) => b.id).join(', ')})`);
  const specs = rig.boards.filter((b) => b.kind === 'virtual' && (only.length === 0 || only.includes(b.id)));
  if (specs.length === 0) throw new RigError(`rig ${rig.name} has no virtual boards to run`);
  const [{ startBroker }, { VirtualAir, VirtualBoard }] = await Promise.all([import('../../harness/broker.ts'), import('../../harness/virtual-board.ts')]);
  const work = mkdtempSync(join(tmpdir(), 'fleet-virtual-'));
  const removeWork = () => rmSync(work, { recursive: true, force: true });
  // Removed whatever state the boards are in, even when stopping overruns and the process is made to exit.
  signals.atForcedExit(() => {
    killHelperProcesses();
    removeWork();
  });
  const air = new VirtualAir();
  air.addInfrastructureAp({ ssid: rig.siteWifi.ssid, password: rig.siteWifi.password, bssid: 'AC:DE:48:00:00:01', position: rig.siteWifi.position });
  let broker: Broker | undefined;
  const boards: InstanceType<typeof VirtualBoard>[] = [];
  let ticker: NodeJS.Timeout | undefined;
  try {
    broker = await startBroker('aedes', 0);
    boards.push(...specs.map((spec) => new VirtualBoard(structuredClone(spec), { air, workDir: work, ...(secureBoot ? { secureBoot } : {}) })));
    const shown = new Map<string, string>();
    const show = () => {
      for (const b of boards) {
        const line = describeBoard(b);
        if (shown.get(b.spec.id) !== line) process.stdout.write(line + '\n');
        shown.set(b.spec.id, line);
      }
    };
    for (const b of boards) {
      if (signals.signal) break;
      process.stderr.write(`virtual: starting board ${b.spec.id} (work folder ${work})\n`);
      await b.start();
      // The console's pseudo-terminal is the user's now (fleet monitor, esptool); the board keeps running.
      await b.releaseConsole();
    }
    if (!signals.signal) {
      process.stderr.write(`virtual: rig ${rig.name}, ${boards.length} board(s) running; broker mqtt://${broker.host}:${broker.port}; Ctrl-C stops them\n`);
      show();
      ticker = setInterval(show, 250);
      await signals.stopped;
    }
  } finally {
    clearInterval(ticker);
    process.stderr.write('virtual: stopping\n');
    signals.closing(`the boards (${boards.map((b) => b.spec.id).join(', ')})`);
    await Promise.allSettled(boards.map((b) => b.stop()));
    signals.closing('the MQTT broker');
    await broker?.close().catch(() => undefined);
    removeWork();
  }
}

/** board <id> console=<pty> rfc2217=<url> [ethernet=<url>] [softap=<url>] [station=<url>] [mode=<mode>] */
function describeBoard(b: import('../../harness/virtual-board.ts').VirtualBoard): string {
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
}
