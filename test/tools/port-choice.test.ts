// The board commands take the port as esptool and idf.py users type it: -p/--port or ESPPORT, and
// the rate as -b/--baud or ESPBAUD (flashing) / MONITORBAUD (the console). With no port given they
// use the machine's only serial port, and list the ports to pick from when there are several.
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firmwareImage } from '../../firmware/sdk-host/firmware-image.ts';
import { describePorts } from '../../harness/transport/usb-ports.ts';
import { PortChoiceError, resolvePort } from '../../tools/commands/port-options.ts';
import { runFleet } from '../helpers/fleet-cli.ts';
import { startVirtual, type RunningVirtual, type VirtualBoardLine } from '../helpers/fleet-virtual.ts';

// As node-serialport lists them (test/harness/usb-ports.test.ts has the same shapes).
const S3 = { path: '/dev/ttyACM0', manufacturer: 'Espressif', vendorId: '303a', productId: '1001' };
const CP2102 = { path: '/dev/ttyUSB0', manufacturer: 'Silicon Labs', vendorId: '10c4', productId: 'ea60' };

describe('which port, when none is given', () => {
  const said: string[] = [];
  const say = (line: string) => said.push(line);

  it('the one given wins, and nothing is listed', async () => {
    let listed = false;
    expect(await resolvePort('/dev/ttyUSB7', say, async () => ((listed = true), []))).toBe('/dev/ttyUSB7');
    expect(listed).toBe(false);
  });

  it("the machine's only serial port, said so", async () => {
    expect(await resolvePort(undefined, say, async () => describePorts([CP2102]))).toBe('/dev/ttyUSB0');
    expect(said.at(-1)).toBe('using /dev/ttyUSB0, the only serial port (give another with -p or ESPPORT)');
  });

  it('none: a usage error that says how to give one', async () => {
    const err = await resolvePort(undefined, say, async () => []).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PortChoiceError);
    expect(err).toMatchObject({ exitCode: 2, message: 'no serial port found on this machine: plug the board in, or give -p <port> (a path or rfc2217://host:port) or ESPPORT' });
  });

  it('several: a usage error listing them, Espressif first', async () => {
    const err = await resolvePort(undefined, say, async () => describePorts([CP2102, S3])).catch((e: unknown) => e);
    expect(err).toMatchObject({
      exitCode: 2,
      message: [
        '2 serial ports; pick one with -p <port> or ESPPORT:',
        '  * /dev/ttyACM0             303a:1001  Espressif USB-Serial/JTAG, reset usb-jtag',
        '  + /dev/ttyUSB0             10c4:ea60  Silicon Labs CP210x, reset classic',
      ].join('\n'),
    });
  });
});

describe('-p, ESPPORT, ESPBAUD and MONITORBAUD on a virtual board', () => {
  let virtual: RunningVirtual;
  let board: VirtualBoardLine;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'port-choice-'));
    writeFileSync(join(dir, 'fw.bin'), await firmwareImage('2026.08.02'));
    virtual = startVirtual();
    board = await virtual.board('source');
  }, 120_000);
  afterAll(async () => {
    await virtual?.stop('SIGINT');
    rmSync(dir, { recursive: true, force: true });
  });

  it('console takes -p, or ESPPORT; -p wins over ESPPORT', async () => {
    const status = /^OK \{"uuid":"5c0e1a00-0000-4000-8000-000000000001"/;
    expect((await runFleet(['console', '-p', board.rfc2217, 'status'])).stdout).toMatch(status);
    expect((await runFleet(['console', 'status'], { env: { ESPPORT: board.console } })).stdout).toMatch(status);
    const both = await runFleet(['console', '-p', board.rfc2217, 'status'], { env: { ESPPORT: join(dir, 'not-a-port') } });
    expect([both.code, both.stdout]).toEqual([0, expect.stringMatching(status)]);
  });

  it('a bad MONITORBAUD or ESPBAUD is a usage error naming the variable', async () => {
    const monitor = await runFleet(['console', '-p', board.rfc2217, 'status'], { env: { MONITORBAUD: 'fast' } });
    expect(monitor.code).toBe(2);
    expect(monitor.stderr).toContain("option '-b, --baud <rate>' value 'fast' from env 'MONITORBAUD' is invalid. must be a baud rate from 300 to 5000000: fast");
    const flash = await runFleet(['flash', '-p', board.rfc2217, join(dir, 'fw.bin')], { env: { ESPBAUD: '12' } });
    expect(flash.code).toBe(2);
    expect(flash.stderr).toContain("from env 'ESPBAUD' is invalid");
  });

  it('flash takes ESPPORT and ESPBAUD (the rate esptool switches to)', { timeout: 120_000 }, async () => {
    const r = await runFleet(['flash', join(dir, 'fw.bin')], { env: { ESPPORT: board.rfc2217, ESPBAUD: '460800' }, timeoutMs: 110_000 });
    expect(r.stderr).toContain('esptool: Changing baudrate to 460800');
    expect([r.code, r.stdout.trimEnd().split('\n').at(-1)]).toEqual([0, 'booted 2026.08.02']);
  });

  it('--help documents -p, -b and their variables', async () => {
    for (const [command, env] of [['flash', 'ESPBAUD'], ['monitor', 'MONITORBAUD'], ['console', 'MONITORBAUD']] as const) {
      const help = (await runFleet([command, '--help'])).stdout.replace(/\s+/g, ' ');
      expect(help, command).toContain('-p, --port <port> serial port path or rfc2217://host:port (default: the only serial port of this machine) (env: ESPPORT)');
      expect(help, command).toMatch(new RegExp(`-b, --baud <rate> [^(]*\\(default: \\d+, env: ${env}\\)`));
    }
  });
});
