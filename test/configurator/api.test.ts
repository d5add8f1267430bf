// The configurator's server over real loopback sockets, without a browser: the site file, the
// configuration's checks and its canonical export, every bad request answered with a status and a
// JSON message (and nothing stored changed), the Host and cross-site guards, and controllers that
// misbehave (silent, not the API, oversized answers) shown as such. Real sockets stand in for them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, Socket, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startConfigurator, type RunningConfigurator } from '../../configurator/server/app.ts';
import { emptyConfiguration } from '../../configurator/schema/controller-configuration.ts';
import { configurationProblem, etagOf, exportText, MAX_EXPORT_BYTES } from '../../configurator/server/export.ts';
import { SiteFileError, SiteStore } from '../../configurator/server/site-store.ts';
import { freeLoopbackPort } from '../../harness/ports.ts';
import { PAGE_CSP } from '../../web-common/server/security-headers.ts';

let dir: string;
let running: RunningConfigurator;
let cookie = '';

async function call(method: string, path: string, o: { body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(running.url + path.replace(/^\//, ''), {
    method,
    headers: { 'x-fleet-page': '1', cookie, ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
    body: o.body,
  });
  const set = res.headers.get('set-cookie');
  if (set) cookie = set.split(';')[0]!;
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'configurator-api-'));
  running = await startConfigurator({ site: join(dir, 'site.db'), link: { timeoutMs: 600 } });
});

afterAll(async () => {
  await running?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the configuration and its export', () => {
  it('an empty configuration is valid and exports canonical text whatever the order of keys', () => {
    const c = emptyConfiguration();
    expect(configurationProblem(c)).toBeNull();
    const reversed = (o: object) => Object.fromEntries(Object.entries(o).reverse());
    const reordered = { ...reversed(c), mqtt: reversed(c.mqtt) } as unknown as typeof c;
    expect(Object.keys(reordered)[0]).toBe('ota');
    expect(exportText(reordered)).toBe(exportText(c));
    expect(exportText(c).startsWith('{\n  "areas": [],\n  "circuits": [],\n  "colors": [],\n  "format": "fleet-controller-configuration-v1",')).toBe(true);
    expect(etagOf(exportText(c))).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names the first problem: unknown keys, wrong types, duplicate ids, dangling references, a GPIO used twice', () => {
    const c = () => emptyConfiguration();
    const problems = [
      [{ ...c(), extra: 1 }, 'configuration.extra: unknown key'],
      [{ ...c(), format: 'v0' }, 'configuration.format: expected "fleet-controller-configuration-v1", got "v0"'],
      [{ ...c(), inputs: [{ id: 'a', name: 'A', kind: 'switch', pin: 99 }] }, 'configuration.inputs[0].pin: expected a GPIO number from 0 to 48, got 99'],
      [{ ...c(), inputs: [{ id: 'A B', name: 'A', kind: 'switch', pin: 1 }] }, 'configuration.inputs[0].id: expected an id: 1 to 32 of a-z 0-9 _ -, starting with a letter or a digit, got "A B"'],
      [{ ...c(), outputs: [{ id: 'o', name: 'O', kind: 'relay', pin: 1 }, { id: 'o', name: 'P', kind: 'relay', pin: 2 }] }, 'configuration.outputs[1].id: "o" is used twice in outputs'],
      [{ ...c(), circuits: [{ id: 'c', name: 'C', outputs: ['nope'], inputs: [] }] }, 'configuration.circuits[0].outputs: there is no output "nope"'],
      [{ ...c(), areas: [{ id: 'a', name: 'A', circuits: [], icon: 'x' }] }, 'configuration.areas[0].icon: there is no icon "x"'],
      [{ ...c(), inputs: [{ id: 'i', name: 'I', kind: 'switch', pin: 4 }], outputs: [{ id: 'o', name: 'O', kind: 'relay', pin: 4 }] }, 'configuration.outputs[0].pin: GPIO 4 is already used by input "i"'],
      [{ ...c(), mqtt: { ...c().mqtt, password: 7 } }, 'configuration.mqtt.password: expected a string, got another value (not shown: a secret)'],
    ] as const;
    for (const [doc, message] of problems) expect(configurationProblem(doc)?.message).toBe(message);
  });
});

describe('the site file', () => {
  it('is created when missing; a file that is not a site is refused with a sentence, and left as it was', () => {
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not a database at all, just some words that are long enough');
    expect(() => SiteStore.open(text)).toThrow(new SiteFileError(`${text} cannot be used as a site: file is not a database`));
    const cloud = join(dir, 'cloud.sqlite');
    const db = new Database(cloud);
    db.exec('CREATE TABLE devices (uuid TEXT)');
    db.close();
    expect(() => SiteStore.open(cloud)).toThrow(`${cloud} cannot be used as a site: it holds tables that are not a site's`);
    const site = SiteStore.open(join(dir, 'fresh.db'));
    site.close();
    const newer = new Database(join(dir, 'fresh.db'));
    newer.pragma('user_version = 9');
    newer.close();
    expect(() => SiteStore.open(join(dir, 'fresh.db'))).toThrow('it was written by a newer configurator (site schema 9, this one knows 2)');
  });
});

describe('the API refuses bad requests with a status and a JSON message, nothing changed', () => {
  let id: number;
  it('adds a controller; refuses bad names, addresses and duplicates', async () => {
    const ok = await call('POST', '/api/controllers', { body: JSON.stringify({ name: 'Hall', address: 'http://127.0.0.9:8080/' }) });
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ name: 'Hall', address: 'http://127.0.0.9:8080', hardware_class: 'ctl-s3' });
    id = ok.json.id;
    const refusals: [unknown, number, string][] = [
      [{ name: 'Hall', address: 'http://127.0.0.9:1' }, 409, 'Another controller of this site is named "Hall"'],
      [{ name: '', address: 'http://127.0.0.9:1' }, 400, 'name: expected 1 to 64 characters'],
      [{ name: 'x', address: 'ftp://127.0.0.9' }, 400, 'address: expected http:// or https://, got ftp:'],
      [{ name: 'x', address: 'http://admin:pw@127.0.0.9' }, 400, 'address: no user name or password in the address (the admin password is asked when you log in)'],
      [{ name: 'x', address: 'http://127.0.0.9/api/status' }, 400, "address: only the scheme, host and port: the API paths are the controller's"],
      [{ name: 'x', address: 'not a url' }, 400, 'address: expected a URL such as http://192.168.1.20, got "not a url"'],
      [{ name: 'x', address: 'http://127.0.0.9', hardware_class: 'a b' }, 400, 'hardware_class: expected 1 to 64 of A-Z a-z 0-9 . _ -, such as ctl-s3'],
      [[1, 2], 400, 'A controller is a JSON object with name, address and hardware_class'],
    ];
    for (const [body, status, message] of refusals) {
      const r = await call('POST', '/api/controllers', { body: JSON.stringify(body) });
      expect([r.status, r.json.message]).toEqual([status, message]);
    }
    expect(running.store.controllers().map((c) => c.name)).toEqual(['Hall']);
  });

  it('malformed JSON is 400, a form body 415, a large body 413, an unknown controller 404, an unknown route 404', async () => {
    const before = running.store.configuration(id).text;
    expect(await call('POST', '/api/controllers', { body: '{"name": ' })).toMatchObject({ status: 400, json: { error: 'invalid_json' } });
    expect(await call('POST', '/api/controllers', { body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).toMatchObject({ status: 415, json: { error: 'unsupported_media_type' } });
    expect(await call('POST', '/api/controllers', { body: JSON.stringify({ name: 'x'.repeat(40_000) }) })).toMatchObject({ status: 413, json: { error: 'payload_too_large', message: 'The request body is larger than 32768 bytes' } });
    const big = JSON.stringify({ ...emptyConfiguration(), pad: 'x'.repeat(MAX_EXPORT_BYTES) });
    expect(await call('PUT', `/api/controllers/${id}/configuration`, { body: big })).toMatchObject({
      status: 413,
      json: { error: 'configuration_too_large', details: { bytes: big.length, limit: MAX_EXPORT_BYTES } },
    });
    expect(await call('PUT', `/api/controllers/${id}/configuration`, { body: JSON.stringify({ ...emptyConfiguration(), inputs: 'none' }) })).toMatchObject({
      status: 400,
      json: { error: 'invalid_configuration', message: 'configuration.inputs: expected an array, got "none"', details: { field: 'inputs' } },
    });
    expect(await call('GET', '/api/controllers/99/configuration')).toMatchObject({ status: 404, json: { error: 'controller_not_found', message: 'No controller 99 in this site' } });
    expect(await call('GET', '/api/controllers/1x/state')).toMatchObject({ status: 404, json: { error: 'controller_not_found' } });
    expect(await call('GET', '/api/nothing')).toMatchObject({ status: 404, json: { error: 'route_not_found' } });
    expect(running.store.configuration(id).text).toBe(before);
  });

  it('a client record needs the site\'s client settings; a record with a bad MAC or UUID is named', async () => {
    expect(await call('POST', `/api/controllers/${id}/records`, { body: JSON.stringify({ kind: 'clients', uuid: 'lamp-1', mac: '02:00:00:00:00:01' }) })).toMatchObject({
      status: 400,
      json: { message: "Set the site's client settings first (Wi-Fi, MQTT broker, CA certificate): every client record carries them" },
    });
    expect((await call('POST', `/api/controllers/${id}/records`, { body: JSON.stringify({ kind: 'controllers', uuid: 'ctl/1', mac: '02:00:00:00:00:01' }) })).json.message).toBe('uuid: expected 1 to 64 of A-Z a-z 0-9 - _, starting with a letter or a digit');
    expect((await call('POST', `/api/controllers/${id}/records`, { body: JSON.stringify({ kind: 'controllers', uuid: 'ctl-1', mac: '02:00:00' }) })).json.message).toBe('ethernet_mac: expected a MAC address such as 24:0A:C4:10:00:21');
    expect(running.store.records(id)).toEqual([]);
    // Not logged in to the controller: registered in the site, written by the next Deploy.
    const r = await call('POST', `/api/controllers/${id}/records`, { body: JSON.stringify({ kind: 'controllers', uuid: 'ctl-1', name: 'Annex', mac: '02-00-00-00-00-0a' }) });
    expect(r).toMatchObject({ status: 201, json: { record: { kind: 'controllers', uuid: 'ctl-1', name: 'Annex', mac: '02:00:00:00:00:0A' }, on_controller: false } });
  });
});

describe('the guards', () => {
  it('another Host (DNS rebinding) is 421; a request without the page\'s header or from another origin is 403', async () => {
    const before = running.store.controllers().length;
    const port = new URL(running.url).port;
    const raw = (headers: Record<string, string>) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const s = new Socket();
        let data = '';
        s.on('data', (d) => (data += d)).on('end', () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(data)?.[1]), body: data.slice(data.indexOf('\r\n\r\n') + 4) })).on('error', reject);
        s.connect(Number(port), '127.0.0.1', () => s.end(`GET /api/site HTTP/1.1\r\n${Object.entries({ connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`));
      });
    expect(await raw({ host: `rebound.example:${port}`, 'x-fleet-page': '1' })).toMatchObject({ status: 421 });
    expect(await raw({ host: `localhost:${port}`, 'x-fleet-page': '1' })).toMatchObject({ status: 200 });
    const post = (headers: Record<string, string>) => call('POST', '/api/controllers', { body: JSON.stringify({ name: 'Sneaky', address: 'http://127.0.0.9' }), headers });
    expect((await post({ 'x-fleet-page': '' })).json).toEqual({ error: 'cross_site_request', message: 'Refused: the x-fleet-page header is missing; changes are made only from the page itself' });
    expect((await post({ origin: 'http://evil.example' })).json.message).toBe('Refused: the request comes from http://evil.example; changes are made only from the page itself');
    expect((await post({ 'sec-fetch-site': 'cross-site' })).json.message).toBe('Refused: the browser says the request is cross-site; changes are made only from the page itself');
    expect(running.store.controllers().length).toBe(before);
  });
});

describe('the page\'s files', () => {
  it('are served at their exact paths only: a trailing slash or another case is 404, never 500', async () => {
    for (const path of ['/app.js/', '/app.css/', '/APP.JS', '/App.css', '/app.js//', '//app.js', '/app.js%2F']) {
      const res = await fetch(running.url + path.slice(1));
      expect([path, res.status, await res.json()]).toEqual([path, 404, { error: 'route_not_found', message: 'No such page' }]);
    }
    const head = await fetch(`${running.url}app.css/`, { method: 'HEAD' });
    expect(head.status).toBe(404);
    for (const path of ['', 'app.js', 'app.css']) expect([path, (await fetch(running.url + path)).status]).toEqual([path, 200]);
  });

  it('carry a strong ETag, no-cache and the page security headers; an unchanged file is a 304 (the web kit serves them)', async () => {
    for (const path of ['', 'app.js', 'app.css']) {
      const first = await fetch(running.url + path);
      const etag = first.headers.get('etag') ?? '';
      expect([path, etag, first.headers.get('cache-control'), first.headers.get('content-security-policy')]).toEqual([path, expect.stringMatching(/^"[0-9a-f]{32}"$/), 'no-cache', PAGE_CSP]);
      // As a browser revalidates (fetch() would add Cache-Control: no-cache, which asks for the file whatever its ETag).
      const again = await fetch(running.url + path, { headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' } });
      expect([path, again.status, await again.text()]).toEqual([path, 304, '']);
    }
  });
});

describe('controllers that misbehave are shown as such', () => {
  let silent: TcpServer;
  let notApi: Server;
  const held: Socket[] = [];
  beforeAll(async () => {
    silent = createTcpServer((s) => held.push(s)); // accepts, never answers
    notApi = createServer((req, res) => {
      if (req.url === '/api/login') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>router login</html>');
      res.writeHead(200, { 'content-type': 'application/json' }).end('x'.repeat(200_000));
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => notApi.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    for (const s of held) s.destroy();
    await new Promise((r) => silent.close(r));
    notApi.closeAllConnections();
    await new Promise((r) => notApi.close(r));
  });

  it('silent: "did not answer within 0.6 s"; refused: "connection refused"; not its API: "answered … without a token"', async () => {
    const add = async (name: string, address: string) => (await call('POST', '/api/controllers', { body: JSON.stringify({ name, address }) })).json.id as number;
    const quiet = await add('Quiet', `http://127.0.0.1:${(silent.address() as AddressInfo).port}`);
    const s = await call('GET', `/api/controllers/${quiet}/state`);
    expect(s).toMatchObject({ status: 200, json: { reachable: false, logged_in: false, backup: 'unknown', problem: `Quiet (http://127.0.0.1:${(silent.address() as AddressInfo).port}) did not answer within 0.6 s` } });
    const login = await call('POST', `/api/controllers/${quiet}/login`, { body: JSON.stringify({ password: 'whatever-it-is' }) });
    expect(login).toMatchObject({ status: 504, json: { error: 'controller_timeout' } });
    const closed = await freeLoopbackPort();
    const gone = await add('Gone', `http://127.0.0.1:${closed}`);
    expect((await call('GET', `/api/controllers/${gone}/state`)).json.problem).toBe(`Gone (http://127.0.0.1:${closed}) did not answer: connection refused (is it powered and on this network?)`);
    const odd = await add('Odd', `http://127.0.0.1:${(notApi.address() as AddressInfo).port}`);
    expect(await call('POST', `/api/controllers/${odd}/login`, { body: JSON.stringify({ password: 'whatever-it-is' }) })).toMatchObject({ status: 502, json: { error: 'controller_bad_answer', message: 'Odd answered its log-in without a token' } });
    expect(await call('POST', `/api/controllers/${odd}/deploy`)).toMatchObject({ status: 401, json: { error: 'not_logged_in', message: 'Log in to Odd first (its admin password)' } });
    expect(await call('POST', `/api/controllers/${odd}/login`, { body: '{"password": ""}' })).toMatchObject({ status: 400, json: { error: 'invalid_body' } });
  });
});
