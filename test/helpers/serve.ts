// `fleet serve` as a real process tree (the supervisor and its workers) on a loopback port, for the
// tests of docs/cloud-workers.md: its URL, its output, its workers' pids, requests pinned to one
// worker (a kept-alive connection), signed uploads, and its stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { fileURLToPath } from 'node:url';
import { mintToken } from '../../cloud/auth/jwt.ts';
import { signDeviceRequest } from '../../tools/device-signer.ts';

const BIN = fileURLToPath(new URL('../../bin/fleet.js', import.meta.url));
export const SERVE_JWT_SECRET = 'serve-test-secret-0123456789';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json: any;
  /** The request went over a connection opened before it (so to the same worker as the one before). */
  reusedSocket: boolean;
}

export interface Serve {
  url: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The worker processes now (children of the supervisor, from /proc). */
  workerPids(): number[];
  /** Sends the signal to the supervisor; resolves with its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

export async function startServe(env: Record<string, string>): Promise<Serve> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
    env: { PATH: process.env.PATH ?? '', JWT_SECRET: SERVE_JWT_SECRET, LOG_FORMAT: 'json', WORKERS: '2', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (err += c));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start in 30 s: ${err}`)), 30_000);
    const look = () => {
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        child.stderr!.off('data', look);
        resolve(m[1]!);
      }
    };
    child.stderr!.on('data', look);
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
  return {
    url,
    child,
    stdout: () => out,
    stderr: () => err,
    workerPids: () => readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    exited,
  };
}

export function superUserToken(): Promise<string> {
  return mintToken(new TextEncoder().encode(SERVE_JWT_SECRET), { subject: 'serve-test' });
}

/** One HTTP exchange over `agent` (a kept-alive connection when it has one). */
/** A request with no answer for this long fails with code TIMEOUT, as a device's would. */
export const REQUEST_TIMEOUT_MS = 15_000;

export function send(url: string, agent: Agent, method: string, path: string, headers: Record<string, string> = {}, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method, agent, headers: body ? { ...headers, 'content-length': String(body.length) } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        let json: any;
        try {
          json = JSON.parse(bytes.toString());
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bytes, json, reusedSocket: req.reusedSocket });
      });
    });
    req.on('error', reject);
    // A connection node:cluster was handing to a worker as it was killed is never answered (the
    // supervisor keeps its copy open, docs/cloud-workers.md): the client gives up, as a device does.
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(Object.assign(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`), { code: 'TIMEOUT' })));
    req.end(body);
  });
}

/**
 * One kept-alive connection to each of `count` different workers (by GET /health's `worker`):
 * a request sent on `agents.get(n)` with `reusedSocket` true was served by worker n.
 */
export async function agentsPerWorker(url: string, count: number): Promise<Map<number, Agent>> {
  const agents = new Map<number, Agent>();
  for (let attempt = 0; agents.size < count && attempt < 50; attempt++) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const { json } = await send(url, agent, 'GET', '/health');
    if (agents.has(json.worker)) agent.destroy();
    else agents.set(json.worker, agent);
  }
  if (agents.size < count) throw new Error(`reached ${agents.size} of ${count} workers in 50 connections`);
  return agents;
}

export interface TestDevice {
  uuid: string;
  key: KeyObject;
}

export async function enrollDevice(url: string, agent: Agent, uuid: string): Promise<TestDevice> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const body = Buffer.from(JSON.stringify({ public_key: publicKey.export({ type: 'spki', format: 'pem' }).toString() }));
  const res = await send(url, agent, 'PUT', `/admin/devices/${uuid}`, { authorization: `Bearer ${await superUserToken()}`, 'content-type': 'application/json' }, body);
  if (res.status !== 201 && res.status !== 200) throw new Error(`enroll ${uuid}: ${res.status} ${res.body.toString()}`);
  return { uuid, key: privateKey };
}

/** A device's backup number `n`: FFCE magic and 64 KB that differ per device and per n. */
export function backupBlob(uuid: string, n: number, size = 64 * 1024): Buffer {
  const blob = Buffer.alloc(size);
  blob.write('FFCE');
  const seed = createHash('sha256').update(`${uuid}/${n}`).digest();
  for (let at = 4; at < size; at += seed.length) seed.copy(blob, at);
  return blob;
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The headers of a signed backup upload (fresh nonce unless the signature headers are given). */
export function uploadHeaders(d: TestDevice, signed = signDeviceRequest(d.key, d.uuid)): Record<string, string> {
  return { ...signed, 'content-type': 'application/octet-stream' };
}
