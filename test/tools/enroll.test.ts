// Enrolling a board without hand work: the console's `pubkey` answer piped as it is
// (`fleet console --port … pubkey | fleet device enroll --public-key -`, the UUID taken from it),
// `--from-port` asking the board itself, and the refusals (another board's key, no UUID, not a key).
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollmentUuid, parseEnrollmentKey } from '../../tools/commands/enroll.ts';
import { startTestCloud, TEST_JWT_SECRET, type TestCloud } from '../helpers/cloud.ts';
import { FLEET_JS, ROOT, runFleet } from '../helpers/fleet-cli.ts';
import { startVirtual, type RunningVirtual, type VirtualBoardLine } from '../helpers/fleet-virtual.ts';

const SOURCE_UUID = '5c0e1a00-0000-4000-8000-000000000001';
const pem = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe("reading the key: a PEM, or the console's answer as it is", () => {
  it('takes the answer with or without OK, and its UUID', () => {
    const key = pem();
    const answer = `OK ${JSON.stringify({ uuid: 'dev-7', public_key_pem: key })}\n`;
    expect(parseEnrollmentKey(answer, 'standard input')).toEqual({ uuid: 'dev-7', publicKeyPem: key });
    expect(parseEnrollmentKey(answer.slice(3), 'x')).toEqual({ uuid: 'dev-7', publicKeyPem: key });
    // A monitor's capture: log lines around the answer.
    expect(parseEnrollmentKey(`LOG INFO boot: ready\n${answer}OLED []\n`, 'x')).toEqual({ uuid: 'dev-7', publicKeyPem: key });
    expect(parseEnrollmentKey(`\n${key}`, 'key.pem')).toEqual({ publicKeyPem: key });
  });

  it('refuses what is not a key, naming where it came from', () => {
    expect(() => parseEnrollmentKey('', 'standard input')).toThrow("standard input is empty: give a PEM public key, or the console's answer to pubkey (fleet console --port … pubkey)");
    expect(() => parseEnrollmentKey('ERR unknown_command pubkeyy\n', 'standard input')).toThrow("standard input holds the board's refusal, not a key: ERR unknown_command pubkeyy");
    expect(() => parseEnrollmentKey('OK {"uuid":"d","role":"controller"}', 'standard input')).toThrow('standard input: the answer has no public_key_pem; is it the answer to pubkey (not status)?');
    expect(() => parseEnrollmentKey('hello', 'k.txt')).toThrow("k.txt is neither a PEM public key (-----BEGIN PUBLIC KEY-----) nor the console's answer to pubkey (OK {…})");
  });

  it('the UUID given and the board’s must agree; a bare PEM needs one', () => {
    expect(enrollmentUuid(undefined, { uuid: 'a', publicKeyPem: '' }, 's')).toBe('a');
    expect(enrollmentUuid('a', { uuid: 'a', publicKeyPem: '' }, 's')).toBe('a');
    expect(enrollmentUuid('b', { publicKeyPem: '' }, 's')).toBe('b');
    expect(() => enrollmentUuid('b', { uuid: 'a', publicKeyPem: '' }, 'standard input')).toThrow("the key in standard input is board a's, not b's: enroll it as a, or leave the UUID out");
    expect(() => enrollmentUuid(undefined, { publicKeyPem: '' }, 'standard input')).toThrow('a bare PEM names no device: give its UUID (fleet device enroll <uuid> --public-key -)');
  });
});

describe('enrolling a virtual board', () => {
  let cloud: TestCloud;
  let virtual: RunningVirtual;
  let board: VirtualBoardLine;
  let boardKey: string;
  const env = () => ({ JWT_SECRET: TEST_JWT_SECRET, FLEET_CLOUD_URL: cloud.url });
  const enrolledKey = async (uuid: string) => (await cloud.store.getDevice(uuid))?.publicKeyPem;

  beforeAll(async () => {
    cloud = await startTestCloud();
    virtual = startVirtual();
    board = await virtual.board('source');
    const answer = await runFleet(['console', '--port', board.rfc2217, 'pubkey']);
    boardKey = (JSON.parse(answer.stdout.replace(/^OK /, '')) as { public_key_pem: string }).public_key_pem;
  }, 120_000);
  afterAll(async () => {
    await virtual?.stop('SIGINT');
    await cloud?.close();
  });

  it('fleet console … pubkey | fleet device enroll --public-key -: the UUID from the answer', { timeout: 60_000 }, async () => {
    // The pipe as a shell runs it: two processes, the console's stdout into enroll's stdin.
    const pipeline = `"${process.execPath}" "${FLEET_JS}" console --port ${board.rfc2217} pubkey | "${process.execPath}" "${FLEET_JS}" device enroll --public-key -`;
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const sh = spawn('sh', ['-c', pipeline], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env() } });
      let stdout = '';
      let stderr = '';
      sh.stdout.on('data', (c) => (stdout += c));
      sh.stderr.on('data', (c) => (stderr += c));
      sh.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout)).toMatchObject({ uuid: SOURCE_UUID });
    expect(await enrolledKey(SOURCE_UUID)).toBe(boardKey);
  });

  it('--from-port asks the board itself, over RFC 2217 and over its pseudo-terminal', { timeout: 60_000 }, async () => {
    await cloud.store.deleteDevice(SOURCE_UUID);
    for (const port of [board.rfc2217, board.console]) {
      const r = await runFleet(['device', 'enroll', '--from-port', port], { env: env() });
      expect([port, r.code, r.stderr]).toEqual([port, 0, '']);
      expect(JSON.parse(r.stdout)).toMatchObject({ uuid: SOURCE_UUID });
    }
    expect(await enrolledKey(SOURCE_UUID)).toBe(boardKey);
  });

  it("the board's answer under another UUID is refused (exit 2), nothing enrolled", async () => {
    const answer = (await runFleet(['console', '--port', board.rfc2217, 'pubkey'])).stdout;
    const r = await runFleet(['device', 'enroll', 'someone-else', '--public-key', '-'], { env: env(), input: answer });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`fleet: the key in standard input is board ${SOURCE_UUID}'s, not someone-else's: enroll it as ${SOURCE_UUID}, or leave the UUID out\n`);
    expect(await cloud.store.getDevice('someone-else')).toBeNull();
  });

  it('a bare PEM on standard input: with a UUID it enrolls, without one it is a usage error', async () => {
    const key = pem();
    expect((await runFleet(['device', 'enroll', '--public-key', '-'], { env: env(), input: key })).code).toBe(2);
    const r = await runFleet(['device', 'enroll', 'dev-piped', '--public-key', '-'], { env: env(), input: key });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(await enrolledKey('dev-piped')).toBe(key);
  });

  it('neither --public-key nor --from-port, or both: usage errors that say what to give', async () => {
    const none = await runFleet(['device', 'enroll', 'dev-x'], { env: env() });
    expect([none.code, none.stderr]).toEqual([2, 'fleet: give the key: --public-key <file|->, or --from-port <port> to ask the board\n']);
    const both = await runFleet(['device', 'enroll', '--public-key', '-', '--from-port', board.rfc2217], { env: env() });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/option '--public-key <file>' cannot be used with option '--from-port <port>'/);
  });

  it('--help shows the pipe and --from-port', async () => {
    const help = (await runFleet(['device', 'enroll', '--help'])).stdout;
    expect(help).toContain('fleet console --port /dev/ttyUSB0 pubkey | fleet device enroll --public-key -');
    expect(help).toMatch(/--from-port <port> +ask the board on this serial port/);
  });
});
