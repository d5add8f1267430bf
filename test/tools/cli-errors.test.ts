// No raw Node errors: a file that is not there, a folder where a file should be, a port in use or
// not of this machine. Each command says so in a sentence that names the file or port and what to
// do, with the README's exit code: 2 for a file named on the command line, 4 for the configuration
// of `fleet serve` (its port, its store, its secret file), 5 for a serial port.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_JWT_SECRET } from '../helpers/cloud.ts';
import { runFleet, type FleetRun } from '../helpers/fleet-cli.ts';

let dir: string;
let missing: string;
let aFile: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-errors-'));
  missing = join(dir, 'missing');
  aFile = join(dir, 'a-file');
  writeFileSync(aFile, 'not a folder\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** No errno code, no "Error:", no stack frame: one sentence after "fleet: ". */
function saysOnly(r: FleetRun, sentence: string): void {
  expect(r.stderr).toBe(`fleet: ${sentence}\n`);
  expect(r.stderr).not.toMatch(/\bE[A-Z]{3,}\b|Error:|\n\s+at /);
}

describe('a file named on the command line that is not there: exit 2', () => {
  const cases: [string, (m: string) => string[], (m: string) => string][] = [
    ['device enroll --public-key', (m) => ['device', 'enroll', 'dev-1', '--public-key', `${m}.pem`], (m) => `cannot open ${m}.pem: no such file or folder; check the path`],
    ['firmware release --image', (m) => ['firmware', 'release', 'ctl', '0x00000001', 'ctl', '2026.01.01', '--image', `${m}.bin`], (m) => `cannot open ${m}.bin: no such file or folder; check the path`],
    ['image info', (m) => ['image', 'info', `${m}.bin`], (m) => `cannot open ${m}.bin: no such file or folder; check the path`],
    ['image partitions --csv', (m) => ['image', 'partitions', '--csv', `${m}.csv`, '-o', `${m}.out`], (m) => `cannot open ${m}.csv: no such file or folder; check the path`],
    ['image sign', (m) => ['image', 'sign', '--key', `${m}.pem`, '-o', `${m}.out`, `${m}.bin`], (m) => `the image: cannot open ${m}.bin: no such file or folder; check the path`],
    ['image verify --pub', (m) => ['image', 'verify', '--pub', `${m}.pem`, aFile], (m) => `the key: cannot open ${m}.pem: no such file or folder; check the path`],
    ['image key generate -o in a folder that is not there', (m) => ['image', 'key', 'generate', '-o', join(m, 'k.pem')], (m) => `cannot open ${join(m, 'k.pem')}: no such file or folder; check the path`],
    ['flash', (m) => ['flash', '--port', 'rfc2217://127.0.0.1:1', `${m}.bin`], (m) => `cannot open ${m}.bin: no such file or folder; check the path`],
    ['bench', (m) => ['bench', `${m}.json`], (m) => `the rig file: cannot open ${m}.json: no such file or folder; check the path`],
    ['virtual', (m) => ['virtual', `${m}.json`], (m) => `the rig file: cannot open ${m}.json: no such file or folder; check the path`],
    ['monitor --log in a folder that is not there', (m) => ['monitor', '--port', 'rfc2217://127.0.0.1:1', '--log', join(m, 'console.log')], (m) => `cannot open ${join(m, 'console.log')}: no such file or folder; check the path`],
  ];
  it.each(cases)('%s', async (_name, args, sentence) => {
    const r = await runFleet(args(missing), { env: { JWT_SECRET: TEST_JWT_SECRET } });
    saysOnly(r, sentence(missing));
    expect(r.code).toBe(2);
  });

  it('a folder where a file should be', async () => {
    const r = await runFleet(['image', 'info', dir]);
    saysOnly(r, `cannot read ${dir}: it is a folder; give a file`);
    expect(r.code).toBe(2);
  });
});

describe('fleet serve: its configuration, exit 4', () => {
  let busy: Server;
  let busyPort: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => busy.close(() => r())));

  const serve = (args: string[], env: Record<string, string>) => runFleet(['serve', ...args], { env: { JWT_SECRET: TEST_JWT_SECRET, DATABASE_URL: ':memory:', ...env }, timeoutMs: 30_000 });

  // In one process (WORKERS=1) and with workers (the supervisor opens the store, each worker listens): the same sentence.
  for (const workers of ['1', '2']) {
    it(`a port in use names the address and says how to choose another (WORKERS=${workers})`, async () => {
      const r = await serve(['--port', String(busyPort)], { WORKERS: workers, DATABASE_URL: join(dir, `busy-port-${workers}.sqlite`) });
      saysOnly(r, `127.0.0.1:${busyPort} is already in use by another program (another cloud?): stop it, or serve on another port with --port or PORT (0 picks a free one)`);
      expect(r.code).toBe(4);
    });

    it(`a store path that cannot be created names it and DATABASE_URL (WORKERS=${workers})`, async () => {
      const url = join(aFile, 'db', 'cloud.sqlite');
      const r = await serve(['--port', '0'], { DATABASE_URL: url, WORKERS: workers });
      saysOnly(r, `the store: cannot create the folder ${join(aFile, 'db')}: a part of the path is a file, not a folder; check the path (DATABASE_URL is ${url})`);
      expect(r.code).toBe(4);
    });
  }

  it('a JWT secret file that cannot be created names it and JWT_SECRET_FILE', async () => {
    const r = await serve(['--port', '0'], { JWT_SECRET: '', JWT_SECRET_FILE: join(aFile, 'jwt-secret') });
    saysOnly(r, `the JWT secret file: cannot create the folder ${aFile}: a file of that name is in the way; remove it or choose another path (set JWT_SECRET_FILE, or JWT_SECRET)`);
    expect(r.code).toBe(4);
  });
});

describe('a serial port that cannot be opened: exit 5, in words', () => {
  it('no such port', async () => {
    const r = await runFleet(['console', '--port', `${missing}-tty`, 'status']);
    saysOnly(r, `cannot open ${missing}-tty: no such port (fleet ports lists the serial ports of this machine)`);
    expect(r.code).toBe(5);
  });

  it('nothing listening at an RFC 2217 URL', async () => {
    const r = await runFleet(['console', '--port', 'rfc2217://127.0.0.1:1', 'status']);
    saysOnly(r, 'cannot reach rfc2217://127.0.0.1:1: connection refused (is an RFC 2217 server listening there?)');
    expect(r.code).toBe(5);
  });
});
