// `fleet efuse burn-key` and `fleet efuse burn` (real fleet processes) against a virtual board's
// RFC 2217 port, as they would burn a real board: key digests of openssl-made RSA-3072 keys (from
// the public key, and from a private key), SECURE_BOOT_EN, a revocation, SECURE_VERSION; each read
// back by `fleet efuse summary` and seen by the chip's one eFuse model (what its boot stage and
// GET_SECURITY_INFO read). And every refusal, with its exit code, before anything is written.
import { execFileSync, spawn } from 'node:child_process';
import { createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHIPS } from '../../firmware/image/chips.ts';
import { publicKeyDigest } from '../../firmware/image/secure-boot.ts';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { loadRig } from '../../harness/rig.ts';
import { VirtualBoard } from '../../harness/virtual-board.ts';
import { FLEET_JS, ROOT, runFleet } from '../helpers/fleet-cli.ts';

const rig = loadRig(fileURLToPath(new URL('../../harness/rigs/two-board.json', import.meta.url)));
let dir: string;
let board: VirtualBoard;
const key = (name: string) => join(dir, name);
const digestOf = (pem: string) => publicKeyDigest(createPublicKey(readFileSync(pem))).toString('hex');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'efuse-burn-'));
  for (const k of ['k0', 'k1']) {
    execFileSync('openssl', ['genrsa', '-out', key(`${k}.pem`), '3072'], { stdio: 'ignore' });
    execFileSync('openssl', ['rsa', '-in', key(`${k}.pem`), '-pubout', '-out', key(`${k}.pub.pem`)], { stdio: 'ignore' });
  }
  execFileSync('openssl', ['genrsa', '-out', key('small.pem'), '2048'], { stdio: 'ignore' });
  execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key('ec.pem')], { stdio: 'ignore' });
  writeFileSync(key('junk.pem'), 'not a key\n');
  execFileSync('openssl', ['rsa', '-in', key('k0.pem'), '-aes256', '-passout', 'pass:secret', '-out', key('enc.pem')], { stdio: 'ignore' });
  board = new VirtualBoard(structuredClone(rig.boards[0]!), { air: new VirtualAir(), workDir: dir });
  await board.start();
}, 180_000);
afterAll(async () => {
  await board?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Everything the fuses hold, to show a refusal changed nothing. */
function fuses() {
  const e = board.eFuses!;
  return { block0: e.block0(), keys: e.keys.map((k) => k.key.toString('hex')), registers: [...e.registers()] };
}

// --after no-reset: these tests are about the burns; the board stays in the ROM loader between them
// (with secure boot on, the factory app is not signed and would not boot after a hard reset).
const fleet = (args: string[]) => runFleet(['efuse', ...args, '-p', board.rfc2217Url, '--after', 'no-reset'], { timeoutMs: 90_000 });
const LEFT_IN_LOADER = 'efuse: the board is left in the ROM download mode (--after no-reset): reset it to run its firmware (fleet monitor resets it as it opens the port)\n';

/** fleet with standard input a terminal (util-linux `script` gives it a pseudo-terminal), `typed` typed at it. */
function fleetAtTerminal(args: string[], typed: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const command = [process.execPath, FLEET_JS, 'efuse', ...args, '-p', board.rfc2217Url].join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    // Typed once the question is on the screen, as a person would.
    const typeWhenAsked = setInterval(() => {
      if (output.includes('Type BURN')) {
        clearInterval(typeWhenAsked);
        child.stdin.end(typed);
      }
    }, 50);
    child.on('close', (code) => {
      clearTimeout(timer);
      clearInterval(typeWhenAsked);
      resolve({ code, output });
    });
  });
}

async function summary(): Promise<string> {
  const s = await fleet(['summary']);
  expect(s.code).toBe(0);
  return s.stdout;
}

describe('fleet efuse burn-key and burn on a virtual board over RFC 2217', () => {
  it('refuses secure boot with no key digest burned, and any burn without --yes when nobody can be asked', { timeout: 120_000 }, async () => {
    const before = fuses();
    const noKey = await fleet(['burn', '--secure-boot-en', '--yes']);
    expect(noKey.code).toBe(8);
    expect(noKey.stderr).toContain('refused, nothing burned: no SECURE_BOOT_DIGESTn is burned (or every one is revoked): with secure boot on, the board would boot nothing');
    const noYes = await fleet(['burn-key', '--digest', key('k0.pub.pem'), '--block', 'BLOCK_KEY0', '--purpose', 'SECURE_BOOT_DIGEST0']);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toContain('burning eFuses cannot be undone: give --yes to confirm');
    expect(fuses()).toEqual(before);
  });

  it('burns key digests (from a public key, and from a private key: its public half), read back by the summary and trusted by the chip', { timeout: 180_000 }, async () => {
    const d0 = digestOf(key('k0.pub.pem'));
    const d1 = digestOf(key('k1.pem'));
    const burned = await fleet(['burn-key', '--digest', key('k0.pub.pem'), '--block', 'BLOCK_KEY0', '--purpose', 'SECURE_BOOT_DIGEST0', '--yes']);
    expect(burned.stderr).toBe(LEFT_IN_LOADER);
    expect(burned.code).toBe(0);
    expect(burned.stdout).toContain(`BLOCK_KEY0 (BLOCK4) is empty: burn SECURE_BOOT_DIGEST0 = ${d0}`);
    expect(burned.stdout).toContain('WARNING: burning eFuses is one-way: it cannot be undone.');
    expect(burned.stdout).toContain(`burned and read back: BLOCK_KEY0 (BLOCK4) = ${d0}; KEY_PURPOSE_0 = SECURE_BOOT_DIGEST0; write protection of BLOCK_KEY0 and KEY_PURPOSE_0`);
    // BLOCK5 is espefuse's other name of BLOCK_KEY1; the private key's public half is digested.
    const fromPrivate = await fleet(['burn-key', '--digest', key('k1.pem'), '--block', 'BLOCK5', '--purpose', 'SECURE_BOOT_DIGEST1', '--yes']);
    expect(fromPrivate.code).toBe(0);
    expect(fromPrivate.stdout).toContain(`burn SECURE_BOOT_DIGEST1 = ${d1}`);

    const text = await summary();
    expect(text).toMatch(/^KEY_PURPOSE_0 \(BLOCK0\) +Purpose of Key0 += SECURE_BOOT_DIGEST0 \(0x9\) R\/-$/m);
    expect(text).toMatch(/^KEY_PURPOSE_1 \(BLOCK0\) +Purpose of Key1 += SECURE_BOOT_DIGEST1 \(0xa\) R\/-$/m);
    expect(text).toContain(`BLOCK_KEY0 (BLOCK4)                Purpose: SECURE_BOOT_DIGEST0                 = ${d0.replace(/(..)(?!$)/g, '$1 ')} R/-`);
    expect(text).toMatch(/^KEY_PURPOSE_3 \(BLOCK0\) +Purpose of Key3 += HMAC_UP \(0x8\) R\/-$/m);
    expect(board.eFuses!.secureBootKeys()).toEqual([
      { digest: d0, slot: 0, revoked: false },
      { digest: d1, slot: 1, revoked: false },
    ]);
    expect(board.eFuses!.codingFailed(4) || board.eFuses!.codingFailed(5)).toBe(false);
    expect([...board.eFuses!.securityInfo(CHIPS.esp32s3.imageChipId).subarray(5, 11)]).toEqual([9, 10, 0, 8, 0, 0]);
  });

  it('refuses a used block, a burned purpose, the HMAC key block, and bad keys or names, before writing anything', { timeout: 240_000 }, async () => {
    const before = fuses();
    const again = await fleet(['burn-key', '--digest', key('k1.pub.pem'), '--block', 'BLOCK_KEY0', '--purpose', 'SECURE_BOOT_DIGEST2', '--yes']);
    expect(again.code).toBe(8);
    expect(again.stderr).toContain('refused, nothing burned: BLOCK_KEY0 is already used (purpose SECURE_BOOT_DIGEST0, write-protected, holds data): eFuses cannot be written twice');
    const purpose = await fleet(['burn-key', '--digest', key('k1.pub.pem'), '--block', 'BLOCK_KEY2', '--purpose', 'SECURE_BOOT_DIGEST0', '--yes']);
    expect(purpose.code).toBe(8);
    expect(purpose.stderr).toContain('SECURE_BOOT_DIGEST0 is already burned in BLOCK_KEY0: a purpose is burned once');
    const hmac = await fleet(['burn-key', '--digest', key('k1.pub.pem'), '--block', 'BLOCK_KEY3', '--purpose', 'SECURE_BOOT_DIGEST2', '--yes']);
    expect(hmac.code).toBe(8);
    expect(hmac.stderr).toContain('BLOCK_KEY3 is already used (purpose HMAC_UP, read-protected, write-protected)');
    // The same digest in the same block again: nothing to burn.
    const same = await fleet(['burn-key', '--digest', key('k0.pem'), '--block', 'BLOCK_KEY0', '--purpose', 'SECURE_BOOT_DIGEST0', '--yes']);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('already holds SECURE_BOOT_DIGEST0');
    expect(same.stdout).not.toContain('WARNING');

    const usage: [string[], string][] = [
      [['--digest', key('small.pem'), '--block', 'BLOCK_KEY2', '--purpose', 'SECURE_BOOT_DIGEST2', '--yes'], 'Secure Boot v2 RSA keys are 3072 bits; this one is 2048'],
      [['--digest', key('ec.pem'), '--block', 'BLOCK_KEY2', '--purpose', 'SECURE_BOOT_DIGEST2', '--yes'], 'RSA-3072 only; this is an EC key'],
      [['--digest', key('junk.pem'), '--block', 'BLOCK_KEY2', '--purpose', 'SECURE_BOOT_DIGEST2', '--yes'], 'is not a PEM key'],
      [['--digest', key('enc.pem'), '--block', 'BLOCK_KEY2', '--purpose', 'SECURE_BOOT_DIGEST2', '--yes'], 'enc.pem is encrypted: burn its public key instead (openssl pkey -in it -pubout -out pub.pem)'],
      [['--digest', key('missing.pem'), '--block', 'BLOCK_KEY2', '--purpose', 'SECURE_BOOT_DIGEST2', '--yes'], 'missing.pem: no such file or folder'],
      [['--digest', key('k1.pem'), '--block', 'BLOCK_KEY6', '--purpose', 'SECURE_BOOT_DIGEST2', '--yes'], 'must be a key block, BLOCK_KEY0 to BLOCK_KEY5 (or BLOCK4 to BLOCK9): BLOCK_KEY6'],
      [['--digest', key('k1.pem'), '--block', 'BLOCK_KEY2', '--purpose', 'HMAC_UP', '--yes'], "a key digest's purpose is SECURE_BOOT_DIGEST0, SECURE_BOOT_DIGEST1 or SECURE_BOOT_DIGEST2: HMAC_UP"],
    ];
    for (const [args, message] of usage) {
      const r = await fleet(['burn-key', ...args]);
      expect(r.stderr).toContain(message);
      expect(r.code).toBe(2);
    }
    expect(fuses()).toEqual(before);
  });

  it('enables secure boot, revokes a key but never the last one, raises SECURE_VERSION but never lowers it', { timeout: 300_000 }, async () => {
    const on = await fleet(['burn', '--secure-boot-en', '--yes']);
    expect(on.code).toBe(0);
    expect(on.stdout).toContain('burn SECURE_BOOT_EN: from the next reset the board boots only images signed by a key in SECURE_BOOT_DIGEST0, SECURE_BOOT_DIGEST1');
    expect(on.stdout).toContain('burned and read back: SECURE_BOOT_EN');
    const revoke = await fleet(['burn', '--revoke-key', '0', '--yes']);
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toContain(`the key in BLOCK_KEY0 (${digestOf(key('k0.pem'))}) is never trusted again`);
    const version = await fleet(['burn', '--secure-version', '3', '--yes']);
    expect(version.code).toBe(0);

    const text = await summary();
    expect(text).toMatch(/^SECURE_BOOT_EN \(BLOCK0\) +Set this bit to enable secure boot += True R\/W$/m);
    expect(text).toMatch(/^SECURE_BOOT_KEY_REVOKE0 \(BLOCK0\) +Revoke secure boot key 0 += True R\/W$/m);
    expect(text).toMatch(/^SECURE_BOOT_KEY_REVOKE1 \(BLOCK0\) +Revoke secure boot key 1 += False R\/W$/m);
    expect(text).toMatch(/^SECURE_VERSION \(BLOCK0\) +Secure version for anti-rollback += 3 R\/W$/m);
    const e = board.eFuses!;
    expect([e.secureBootEnabled, e.secureVersion, e.secureBootKeys().map((k) => [k.slot, k.revoked])]).toEqual([true, 3, [[0, true], [1, false]]]);
    // GET_SECURITY_INFO: secure boot (bit 0), key 0 revoked (bit 3).
    expect(new DataView(e.securityInfo(CHIPS.esp32s3.imageChipId).buffer).getUint32(0, true)).toBe(1 | (1 << 3));

    const before = fuses();
    const last = await fleet(['burn', '--revoke-key', '1', '--yes']);
    expect(last.code).toBe(8);
    expect(last.stderr).toContain('revoking SECURE_BOOT_DIGEST1 would leave no key to trust with secure boot on: the board would never boot again');
    const lower = await fleet(['burn', '--secure-version', '2', '--yes']);
    expect(lower.code).toBe(8);
    expect(lower.stderr).toContain('refused, nothing burned: SECURE_VERSION is 3: eFuse bits cannot be cleared to make it 2');
    const same = await fleet(['burn', '--secure-version', '3', '--yes']);
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('SECURE_VERSION is already 3: nothing to burn');
    const again = await fleet(['burn', '--secure-boot-en', '--yes']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('SECURE_BOOT_EN is already burned: nothing to burn');
    const usage: [string[], string][] = [
      [['burn', '--yes'], 'give exactly one of --secure-boot-en, --revoke-key <slot>, --secure-version <n>'],
      [['burn', '--secure-boot-en', '--secure-version', '4', '--yes'], 'give exactly one of'],
      [['burn', '--secure-version', '17', '--yes'], 'SECURE_VERSION is a whole number from 0 to 16: 17'],
      [['burn', '--revoke-key', '3', '--yes'], 'a secure boot key slot is a whole number from 0 to 2: 3'],
    ];
    for (const [args, message] of usage) {
      const r = await fleet(args);
      expect(r.stderr).toContain(message);
      expect(r.code).toBe(2);
    }
    expect(fuses()).toEqual(before);

    // At a terminal it asks: anything but BURN stops (exit 1, nothing burned); BURN burns.
    const declined = await fleetAtTerminal(['burn', '--secure-version', '4'], 'yes\n');
    expect(declined.output).toContain('WARNING: burning eFuses is one-way: it cannot be undone.');
    expect(declined.output).toContain('not confirmed: nothing was burned');
    expect(declined.code).toBe(1);
    expect(fuses()).toEqual(before);
    const confirmed = await fleetAtTerminal(['burn', '--secure-version', '4'], 'BURN\n');
    expect(confirmed.output).toContain('burned and read back: SECURE_VERSION = 4');
    expect(confirmed.code).toBe(0);
    expect(board.eFuses!.secureVersion).toBe(4);
  });
});
