// npm run bench:cloud: in one run, under the same load tool (autocannon) and concurrency, measure
//   1. a bare node:http server answering a precomputed OTA manifest (the baseline),
//   2. the cloud's OTA check (fast path, the default),
//   3. the cloud's OTA check through Express (OTA_FAST_PATH=0), to show what the fast path buys,
//   4. a minimal Express 5 app answering the same precomputed manifest (Express's own floor),
//   5. signed 64 KB backup uploads, against their own baseline: the bare server reading and dropping
//      the same 64 KB bodies (an upload compared to a GET meant nothing),
//   6. downloads of a 1.5 MB firmware image the cloud hosts (docs/firmware-images.md), against the bare
//      server streaming the same file from disk (throughput ratio),
//   7. 1,000 boards fetching that image at once, from the cloud and from the bare server: completion
//      time and the server's peak RSS during the storm,
// and print requests/s, p99 latency and the ratio to each case's baseline (docs/ota-fast-path.md). Servers run as child processes
// on loopback, the load generator in this process. Figures, not assertions: the machine is shared.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chipByName } from '../../firmware/image/chips.ts';
import { buildVirtualAppImage } from '../../firmware/image/virtual-payload.ts';
import { signDeviceRequest } from '../device-signer.ts';
import { CloudClient } from '../client.ts';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '2' },
    boards: { type: 'string', default: '1000' },
  },
});
const BOARDS = Number(args.boards);
/** The image of the download cases: a 1.5 MB ESP32-S3 app image, half the OTA slot. */
const IMAGE_BYTES = 1_572_864;
const DURATION_S = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const WARMUP_S = Number(args.warmup);
const ROOT = new URL('../../', import.meta.url).pathname;
const JWT_SECRET = randomBytes(24).toString('hex');

interface Figures {
  name: string;
  /** The case this one is compared to. */
  baseline?: string;
  rps: number;
  p99Ms: number;
  p50Ms: number;
  non2xx: number;
  errors: number;
  throughputMBs: number;
}

function waitForLine(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`timed out after 20 s waiting for ${what}; output so far: ${text}`)), 20_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const m = pattern.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what}: process exited with ${code}: ${text}`)));
  });
}

async function startBare(manifestJson: string, imageFile: string): Promise<{ url: string; child: ChildProcess }> {
  const code = `
    const http = require('node:http');
    const fs = require('node:fs');
    const body = Buffer.from(process.env.MANIFEST);
    const imageSize = fs.statSync(process.env.IMAGE).size;
    const stored = Buffer.from(JSON.stringify({ message: 'Backup stored', last_backup_date: new Date().toISOString() }));
    const server = http.createServer((req, res) => {
      if (req.method === 'POST') {
        // The upload baseline: read the whole body, drop it, answer as the cloud does.
        req.on('data', () => {});
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': stored.length });
          res.end(stored);
        });
        return;
      }
      if (req.url === '/image.bin') {
        // The image baseline: the same file streamed from disk, as a plain file server would.
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': imageSize });
        fs.createReadStream(process.env.IMAGE).pipe(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
      res.end(body);
    });
    server.keepAliveTimeout = 65000;
    server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => console.log('bare listening on http://127.0.0.1:' + server.address().port));
  `;
  const child = spawn(process.execPath, ['-e', code], { env: { ...process.env, MANIFEST: manifestJson, IMAGE: imageFile }, stdio: ['ignore', 'pipe', 'pipe'] });
  const m = await waitForLine(child, /listening on (http:\/\/\S+)/, 'the bare server');
  return { url: m[1]!, child };
}

async function startMinimalExpress(manifestJson: string): Promise<{ url: string; child: ChildProcess }> {
  // Express 5 with nothing but the one route writing the same precomputed bytes: what Express costs.
  const code = `
    const express = require('express');
    const body = Buffer.from(process.env.MANIFEST);
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.get('/ota/:class/:product_hex/:application', (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
      res.end(body);
    });
    const server = app.listen(0, '127.0.0.1', () => console.log('express listening on http://127.0.0.1:' + server.address().port));
    server.keepAliveTimeout = 65000;
  `;
  const child = spawn(process.execPath, ['-e', code], { cwd: ROOT, env: { ...process.env, MANIFEST: manifestJson }, stdio: ['ignore', 'pipe', 'pipe'] });
  const m = await waitForLine(child, /listening on (http:\/\/\S+)/, 'the minimal Express app');
  return { url: m[1]!, child };
}

async function startCloud(dbDir: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/fleet.js'), 'serve', '--port', '0'], {
    // One process, as its baselines (each one process): bench:fleet compares the serve's workers with
    // baselines on as many processes (docs/fleet-scale.md).
    env: { ...process.env, DATABASE_URL: join(dbDir, 'cloud.sqlite'), JWT_SECRET, LOG_FORMAT: 'json', WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const m = await waitForLine(child, /listening on (http:\/\/\S+)/, 'the cloud');
  return { url: m[1]!, child };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

function run(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

async function measure(name: string, opts: autocannon.Options, baseline?: string): Promise<Figures> {
  if (WARMUP_S > 0) await run({ ...opts, duration: WARMUP_S });
  const r = await run({ ...opts, duration: DURATION_S, connections: CONNECTIONS });
  const f: Figures = {
    name,
    ...(baseline ? { baseline } : {}),
    rps: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    throughputMBs: r.throughput.average / 1e6,
  };
  process.stderr.write(`  measured ${name}: ${f.rps.toFixed(0)} req/s\n`);
  return f;
}

async function benchToken(): Promise<string> {
  const { mintToken } = await import('../../cloud/auth/jwt.ts');
  return mintToken(new TextEncoder().encode(JWT_SECRET), { subject: 'bench' });
}

/** An admin call as the bench's super user (the same client the `fleet` commands use). */
async function admin(url: string, method: string, path: string, body?: unknown): Promise<void> {
  await new CloudClient(url, benchToken).request(method, path, body);
}

async function seed(url: string, publicKeyPem: string): Promise<string> {
  const track = '/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3';
  for (const v of ['2026.01.01', '2026.02.01', '2026.03.01', '2026.04.01']) {
    await admin(url, 'PUT', `${track}/${v}`, { url: `https://fw.example/ctl-s3/${v}.bin`, size: 1_572_864, sha256: 'ab'.repeat(32) });
  }
  await admin(url, 'POST', `${track}/2026.03.01/revoke`);
  await admin(url, 'PUT', '/admin/devices/bench-device-0001', { public_key: publicKeyPem });
  const res = await fetch(`${url}/ota/ctl-s3/0x00c0ffee/ctl-s3?current_version=2026.02.01`);
  if (res.status !== 200) throw new Error(`seeded OTA check answered ${res.status}`);
  return res.text();
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** The resident set of a process now, in bytes (Linux /proc). */
function rssOf(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

interface Storm {
  ms: number;
  ok: number;
  failed: number;
  rssBeforeMb: number;
  rssPeakMb: number;
}

/**
 * `boards` clients fetch `url` at once, each on its own connection, reading the whole image; done
 * when the last has it. The server's RSS is sampled every 20 ms meanwhile.
 */
async function storm(url: string, boards: number, size: number, pid: number): Promise<Storm> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const rssBefore = rssOf(pid);
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
  const t0 = performance.now();
  const results = await Promise.all(
    Array.from(
      { length: boards },
      () =>
        new Promise<boolean>((resolve) => {
          get(url, { agent }, (res) => {
            let got = 0;
            res.on('data', (c: Buffer) => (got += c.length));
            res.on('end', () => resolve(res.statusCode === 200 && got === size));
            res.on('error', () => resolve(false));
          }).on('error', () => resolve(false));
        }),
    ),
  );
  const ms = performance.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, rssOf(pid));
  agent.destroy();
  const ok = results.filter(Boolean).length;
  return { ms, ok, failed: boards - ok, rssBeforeMb: rssBefore / 1e6, rssPeakMb: peak / 1e6 };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-bench-'));
  const children: ChildProcess[] = [];
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const publicKeyPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const otaPath = '/ota/ctl-s3/0x00c0ffee/ctl-s3?current_version=2026.02.01';
  const results: Figures[] = [];
  const storms: { name: string; s: Storm }[] = [];
  // A real app image (the release checks pass) of about 1.5 MB, its firmware random bytes (they do not deflate).
  const image = Buffer.from(buildVirtualAppImage({ chip: chipByName('esp32s3'), version: '2026.05.01', firmware: randomBytes(IMAGE_BYTES - 2048) }));
  const imageFile = join(dir, 'image.bin');
  writeFileSync(imageFile, image);
  try {
    process.stderr.write(`cloud bench: ${CONNECTIONS} connections, ${DURATION_S} s per case (+${WARMUP_S} s warm-up)\n`);
    const fast = await startCloud(join(dir, 'a'), { OTA_FAST_PATH: '1' });
    children.push(fast.child);
    const manifest = await seed(fast.url, publicKeyPem);

    const BARE = 'bare node:http, precomputed manifest';
    const BARE_UPLOAD = 'bare node:http, reads and drops 64 KB';
    const BARE_IMAGE = `bare node:http, streams the ${mib(image.length)} file`;
    const blob = Buffer.concat([Buffer.from('FFCE'), randomBytes(64 * 1024 - 4)]);
    const etag = 'e'.repeat(64);
    const bare = await startBare(manifest, imageFile);
    children.push(bare.child);
    // The storms first, on fresh processes: the RSS figures are then the storm's own.
    storms.push({ name: `bare node:http, streams the file`, s: await storm(`${bare.url}/image.bin`, BOARDS, image.length, bare.child.pid!) });
    results.push(await measure(BARE, { url: bare.url + otaPath }));
    results.push(
      await measure(
        BARE_UPLOAD,
        { url: bare.url, requests: [{ method: 'POST', path: '/devices/bench-device-0001/backup', headers: { 'content-type': 'application/octet-stream', etag }, body: blob }] },
        BARE_UPLOAD,
      ),
    );
    results.push(await measure(BARE_IMAGE, { url: `${bare.url}/image.bin` }, BARE_IMAGE));
    await stop(bare.child);

    const minimal = await startMinimalExpress(manifest);
    children.push(minimal.child);
    results.push(await measure('minimal Express 5 app, same manifest', { url: minimal.url + otaPath }, BARE));
    await stop(minimal.child);

    results.push(await measure('cloud OTA check (fast path)', { url: fast.url + otaPath }, BARE));

    results.push(
      await measure('cloud signed 64 KB backup upload', {
        url: fast.url,
        requests: [
          {
            method: 'POST',
            path: '/devices/bench-device-0001/backup',
            setupRequest: (req) => ({
              ...req,
              headers: { ...signDeviceRequest(privateKey, 'bench-device-0001'), 'content-type': 'application/octet-stream', etag },
              body: blob,
            }),
          },
        ],
      }, BARE_UPLOAD),
    );
    await stop(fast.child);

    // The hosted image on a fresh cloud: uploaded once, then the storm, then the throughput.
    const hosting = await startCloud(join(dir, 'c'), {});
    children.push(hosting.child);
    const up = await fetch(`${hosting.url}/admin/firmware/ctl-s3/0x00c0ffee/ctl-s3/2026.05.01/image`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await benchToken()}`, 'content-type': 'application/octet-stream' },
      body: image,
    });
    if (up.status !== 201) throw new Error(`the image upload answered ${up.status}: ${await up.text()}`);
    const imageUrl = ((await up.json()) as { url: string }).url;
    storms.push({ name: 'cloud hosted image', s: await storm(imageUrl, BOARDS, image.length, hosting.child.pid!) });
    results.push(await measure(`cloud hosted image download`, { url: imageUrl }, BARE_IMAGE));
    await stop(hosting.child);

    const viaExpress = await startCloud(join(dir, 'b'), { OTA_FAST_PATH: '0' });
    children.push(viaExpress.child);
    await seed(viaExpress.url, publicKeyPem);
    results.push(await measure('cloud OTA check through Express (OTA_FAST_PATH=0)', { url: viaExpress.url + otaPath }, BARE));
    await stop(viaExpress.child);
  } finally {
    for (const c of children) await stop(c);
    rmSync(dir, { recursive: true, force: true });
  }

  const rps = (name: string) => results.find((r) => r.name === name)?.rps ?? NaN;
  const ratio = (r: Figures) => r.rps / rps(r.baseline ?? r.name);
  const named = (prefix: string) => results.find((r) => r.name.startsWith(prefix))!;
  const lines = [
    '',
    `case                                                req/s   p50 ms   p99 ms   ratio to bare   non-2xx   errors`,
    ...results.map(
      (r) =>
        `${r.name.padEnd(50)} ${r.rps.toFixed(0).padStart(7)} ${r.p50Ms.toFixed(1).padStart(8)} ${r.p99Ms.toFixed(1).padStart(8)} ${ratio(r).toFixed(2).padStart(15)} ${String(r.non2xx).padStart(9)} ${String(r.errors).padStart(8)}`,
    ),
    '(uploads are compared to the bare server reading the same 64 KB bodies; OTA checks to the bare manifest)',
    '',
    `OTA check (fast path) / bare: ${ratio(named('cloud OTA check (fast path)')).toFixed(2)} (target 0.70 or better)`,
    `OTA check through Express / bare: ${ratio(named('cloud OTA check through Express')).toFixed(2)}; minimal Express 5 app / bare: ${ratio(named('minimal Express')).toFixed(2)}`,
    `upload / bare upload: ${ratio(named('cloud signed 64 KB')).toFixed(2)}`,
    `image download throughput: cloud ${named('cloud hosted image').throughputMBs.toFixed(0)} MB/s, bare ${named('bare node:http, streams').throughputMBs.toFixed(0)} MB/s, ratio ${(named('cloud hosted image').throughputMBs / named('bare node:http, streams').throughputMBs).toFixed(2)} (goal 0.80 or better)`,
    ...storms.map(
      ({ name, s }) =>
        `${BOARDS} boards fetching the ${mib(image.length)} image at once (${name}): ${(s.ms / 1000).toFixed(2)} s, ${s.ok} complete, ${s.failed} failed, RSS ${s.rssBeforeMb.toFixed(0)} MB before, peak ${s.rssPeakMb.toFixed(0)} MB`,
    ),
  ];
  process.stdout.write(lines.join('\n') + '\n');
  if (results.some((r) => r.errors > 0 || r.non2xx > 0) || storms.some((x) => x.s.failed > 0)) {
    process.stdout.write('some requests failed: see the non-2xx and errors columns\n');
    process.exitCode = 1;
  }
}

await main();
