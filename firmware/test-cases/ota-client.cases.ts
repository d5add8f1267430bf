// The device's OTA update check (spec 4.1): it asks GET /ota/{class}/{product_hex}/{application}
// with its current_version, and "treats any other status [than 200] as a hard error, including 404
// and 409": nothing is downloaded, nothing is written to the passive slot, no reboot. A 200 with its
// own version means up to date; an older one is never installed. The cloud here is a small fake, so
// that the cases run on Node and inside XS; the full install path (a real image into the passive
// slot, rollback) is the harness's ota and ota-rollback scenarios.
import type { ClientRequest, ClientResponse } from '../src/hal/network.ts';
import { utf8Encode } from '../src/core/bytes.ts';
import { writeCloudConfig } from '../src/core/cloud/config.ts';
import { bytesReader } from '../src/core/http/respond.ts';
import { checkAndInstall, OtaError } from '../src/core/ota/client.ts';
import { equal, ok, type TestCase } from './assert.ts';
import { bench, board } from './fixtures.ts';

const CLOUD = 'https://cloud.example';

function rig(answer: (r: ClientRequest) => ClientResponse, o: { configured?: boolean } = {}) {
  const b = bench();
  const seen: ClientRequest[] = [];
  const internet = async (r: ClientRequest): Promise<ClientResponse> => {
    seen.push(r);
    return answer(r);
  };
  const c = board(b, { role: 'controller', internet, firmwareVersion: '2026.03.02' });
  if (o.configured !== false) writeCloudConfig(c.storage, { url: CLOUD });
  return { b, c, seen };
}

const json = (status: number, value: unknown): ClientResponse => ({ status, headers: { 'content-type': 'application/json' }, body: bytesReader(utf8Encode(JSON.stringify(value))) });
const manifest = (version: string) => ({ class: 'ctl-s3', product_hex: '0x00c0ffee', application: 'ctl-s3', version, status: 'RELEASED', url: `${CLOUD}/images/${version}.bin`, size: 4096, sha256: '00'.repeat(32) });

/** Runs the check and returns the OtaError it must end with. */
async function hardError(run: () => Promise<unknown>, what: string): Promise<OtaError> {
  try {
    const result = await run();
    throw new Error(`${what}: expected a hard error, got ${JSON.stringify(result)}`);
  } catch (err) {
    ok(err instanceof OtaError, `${what}: an OtaError (got ${String(err)})`);
    return err as OtaError;
  }
}

export const otaClientCases: TestCase[] = [
  {
    name: 'update check: the request names class, product_hex, application (= class) and current_version',
    async run() {
      const { c, seen } = rig(() => json(200, manifest('2026.03.02')));
      const result = await checkAndInstall(c.hal, { reboot: true });
      equal(JSON.stringify(result), JSON.stringify({ kind: 'up_to_date', version: '2026.03.02' }), 'same version: up to date');
      equal(seen.length, 1, 'one request: nothing downloaded');
      equal(seen[0]!.method, 'GET', 'method');
      equal(seen[0]!.url, `${CLOUD}/ota/ctl-s3/0x00c0ffee/ctl-s3?current_version=2026.03.02`, 'URL');
      equal(c.otaImages.length, 0, 'nothing written');
    },
  },
  {
    name: 'update check: a 404 (no RELEASED firmware for the triple) is a hard error: nothing downloaded or written, no reboot',
    async run() {
      const { b, c, seen } = rig(() => json(404, { error: 'firmware_not_found', message: 'no RELEASED firmware' }));
      const err = await hardError(() => checkAndInstall(c.hal, { reboot: true }), '404');
      equal(err.code, 'check_failed', 'code');
      equal(err.status, 404, 'status kept');
      ok(err.message.includes('404'), 'the message names the status');
      equal(seen.length, 1, 'only the check: no image request');
      equal(c.otaImages.length, 0, 'nothing written to the passive slot');
      await b.clock.advance(60_000);
      equal(c.reboots.length, 0, 'no reboot');
    },
  },
  {
    name: 'update check: 409 (current version REVOKED), 500 and 204 are hard errors too; only 200 is an answer',
    async run() {
      for (const status of [409, 500, 204, 201, 304]) {
        const { b, c, seen } = rig(() => (status === 204 || status === 304 ? { status, headers: {}, body: bytesReader(new Uint8Array(0)) } : json(status, manifest('2026.04.01'))));
        const err = await hardError(() => checkAndInstall(c.hal, { reboot: true }), String(status));
        equal(err.code, 'check_failed', `${status}: code`);
        equal(err.status, status, `${status}: status`);
        equal(seen.length, 1, `${status}: no image request`);
        equal(c.otaImages.length, 0, `${status}: nothing written`);
        await b.clock.advance(60_000);
        equal(c.reboots.length, 0, `${status}: no reboot`);
      }
    },
  },
  {
    name: 'update check over the serial console: "ota check" answers ERR check_failed on a 404 and the board keeps running',
    async run() {
      const { b, c } = rig(() => json(404, { error: 'firmware_not_found' }));
      await c.device.boot();
      const before = c.consoleOut.length;
      c.typeLine('ota check');
      for (let i = 0; i < 50; i++) await Promise.resolve();
      const answer = c.consoleOut.slice(before).find((l) => l.startsWith('OK ') || l.startsWith('ERR '));
      ok(answer !== undefined && answer.startsWith('ERR check_failed '), `ERR check_failed (got ${answer})`);
      ok(answer!.includes('404'), 'the answer names the status');
      await b.clock.advance(60_000);
      equal(c.reboots.length, 0, 'no reboot');
      equal(c.otaImages.length, 0, 'nothing written');
    },
  },
  {
    name: 'update check: an older manifest is refused (never a downgrade), a bad one too; without a cloud configuration nothing is asked',
    async run() {
      const older = rig(() => json(200, manifest('2026.02.09')));
      equal((await hardError(() => checkAndInstall(older.c.hal, { reboot: true }), 'older')).code, 'downgrade', 'older: downgrade');
      equal(older.seen.length, 1, 'older: no image request');
      const bad = rig(() => json(200, { version: '2026.4.1' }));
      equal((await hardError(() => checkAndInstall(bad.c.hal, { reboot: true }), 'bad version')).code, 'bad_manifest', 'bad version');
      const notJson = rig(() => ({ status: 200, headers: {}, body: bytesReader(utf8Encode('<html>')) }));
      equal((await hardError(() => checkAndInstall(notJson.c.hal, { reboot: true }), 'not JSON')).code, 'bad_manifest', 'not JSON');
      const none = rig(() => json(200, manifest('2026.04.01')), { configured: false });
      equal((await hardError(() => checkAndInstall(none.c.hal, { reboot: true }), 'no cloud')).code, 'not_provisioned', 'no cloud configuration');
      equal(none.seen.length, 0, 'no cloud configuration: no request');
    },
  },
];
