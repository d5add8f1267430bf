// `fleet efuse summary` (a real fleet process) against a virtual board's RFC 2217 port: it resets
// the board into download mode, reads the eFuses through the ROM (READ_REG, GET_SECURITY_INFO) and
// prints them like `espefuse summary`; what it prints, the ROM's GET_SECURITY_INFO, and the key
// block the firmware's HMAC is computed with (the identity key the firmware shows on its console)
// are the one eFuse model's. And its errors: a port that cannot be opened, no ROM answering, bad
// options.
import { createECDH, createHmac, createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualAir } from '../../firmware/virtual-esp32/air.ts';
import { deriveIdentityKey } from '../../firmware/src/core/crypto/device-keys.ts';
import { loadRig } from '../../harness/rig.ts';
import { VirtualBoard } from '../../harness/virtual-board.ts';
import { runFleet } from '../helpers/fleet-cli.ts';

const rig = loadRig(fileURLToPath(new URL('../../harness/rigs/two-board.json', import.meta.url)));
const manifest = JSON.parse(readFileSync(new URL('../../firmware/src/platform/moddable/manifest.json', import.meta.url), 'utf8')) as { defines: { fuse: { hmac_key: number } } };
let dir: string;
let board: VirtualBoard;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'efuse-summary-'));
  board = new VirtualBoard(structuredClone(rig.boards[0]!), { air: new VirtualAir(), workDir: dir });
  await board.start();
}, 120_000);
afterAll(async () => {
  await board?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('fleet efuse summary', () => {
  it("prints the board's eFuses as espefuse does; the ROM, the summary and the firmware's HMAC agree on BLOCK_KEY3", { timeout: 90_000 }, async () => {
    const block = manifest.defines.fuse.hmac_key;
    // One model: the firmware's chip and the ROM loader hold the same eFuses object.
    expect(board.eFuses).toBeDefined();
    expect(board.engine.efuses).toBe(board.eFuses);
    // The firmware's identity key comes from the fuse HMAC with the manifest's block.
    const pubkey = await board.command('pubkey');
    const pem = JSON.parse(pubkey.slice(3)).public_key_pem as string;
    const d = deriveIdentityKey((m) => new Uint8Array(createHmac('sha256', Buffer.from(board.spec.fuseKey!, 'hex')).update(m).digest()));
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(Buffer.from(d));
    const jwk = createPublicKey(pem).export({ format: 'jwk' });
    expect(Buffer.concat([Buffer.of(4), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]).equals(ecdh.getPublicKey())).toBe(true);

    const text = await runFleet(['efuse', 'summary', '--port', board.rfc2217Url, '--after', 'no-reset'], { timeoutMs: 60_000 });
    expect(text.stderr).toBe('efuse: the board is left in the ROM download mode (--after no-reset): reset it to run its firmware (fleet monitor resets it as it opens the port)\n');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^MAC \\(BLOCK1\\) +MAC address += ${board.spec.wifiMac.toLowerCase()} \\(OK\\) R/W$`, 'm'));
    expect(text.stdout).toMatch(new RegExp(`^KEY_PURPOSE_${block} \\(BLOCK0\\) +Purpose of Key${block} += HMAC_UP \\(0x8\\) R/-$`, 'm'));
    expect(text.stdout).toMatch(new RegExp(`^BLOCK_KEY${block} \\(BLOCK${block + 4}\\) +Purpose: HMAC_UP += (\\?\\? ){31}\\?\\? -/-$`, 'm'));
    expect(text.stdout).toMatch(/^KEY_PURPOSE_0 \(BLOCK0\) +Purpose of Key0 += USER \(0x0\) R\/W$/m);
    expect(text.stdout).toMatch(/^WAFER_VERSION \(BLOCK1\) +Chip revision += v0\.2 R\/W$/m);
    expect(text.stdout).toMatch(/^SECURE_VERSION \(BLOCK0\) +Secure version for anti-rollback += 0 R\/W$/m);
    expect(text.stdout).not.toContain(board.spec.fuseKey!.toLowerCase());
    await board.settled();
    expect(board.mode).toBe('download');

    const json = await runFleet(['efuse', 'summary', '--format', 'json', '--reset-method', 'none'], { env: { ESPPORT: board.rfc2217Url }, timeoutMs: 60_000 });
    expect(json.code).toBe(0);
    const s = JSON.parse(json.stdout) as { mac: string; keys: { block: number; purpose: string; readable: boolean; writable: boolean; value?: string }[] };
    expect(s.mac).toBe(board.spec.wifiMac.toLowerCase());
    expect(s.keys.filter((k) => k.purpose === 'HMAC_UP').map((k) => [k.block, k.readable, k.writable, k.value])).toEqual([[block, false, false, undefined]]);
  });

  it('says why it cannot open the port (exit 5), when no ROM answers (exit 6), and refuses bad options (exit 2)', { timeout: 120_000 }, async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const refused = await runFleet(['efuse', 'summary', '-p', `rfc2217://127.0.0.1:${port}`]);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(new RegExp(`127\\.0\\.0\\.1:${port}`));

    const missing = await runFleet(['efuse', 'summary', '-p', '/dev/ttyNO-SUCH-PORT']);
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('/dev/ttyNO-SUCH-PORT');

    // The app runs and nobody resets the board: the ROM is not there to answer.
    await board.reset();
    expect(board.mode).toBe('app');
    const silent = await runFleet(['efuse', 'summary', '-p', board.rfc2217Url, '--reset-method', 'none'], { timeoutMs: 100_000 });
    expect(silent.code).toBe(6);
    expect(silent.stderr).toContain(`no answer from the ROM bootloader on ${board.rfc2217Url} (reset method none)`);

    const badMethod = await runFleet(['efuse', 'summary', '-p', board.rfc2217Url, '--reset-method', 'dtr']);
    expect(badMethod.code).toBe(2);
    expect(badMethod.stderr).toMatch(/reset method must be one of classic, usb-jtag, none: "dtr"/);
    const badFormat = await runFleet(['efuse', 'summary', '-p', board.rfc2217Url, '--format', 'xml']);
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain('must be text or json: xml');
  });
});
