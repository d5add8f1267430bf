// GET /openapi.json as the cloud serves it, linted by Redocly's CLI (a dev dependency) with the
// project's redocly.yaml: the recommended rules, no error, no warning (docs/openapi-lint.md).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../helpers/cloud.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const redocly = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
const config = join(root, 'redocly.yaml');
let cloud: TestCloud;
let dir: string;

beforeAll(async () => {
  cloud = await startTestCloud();
  dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
});
afterAll(async () => {
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
});

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

function lint(file: string): Promise<LintReport> {
  return new Promise((resolve, reject) => {
    // Telemetry off twice over (redocly.yaml and the environment): the lint never leaves the machine.
    const env = { PATH: process.env.PATH ?? '', HOME: dir, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    execFile(process.execPath, [redocly, 'lint', file, '--config', config, '--format', 'json'], { cwd: dir, env, timeout: 60_000 }, (err, stdout, stderr) => {
      try {
        resolve(JSON.parse(stdout) as LintReport);
      } catch {
        reject(new Error(`redocly lint gave no report (${err?.message ?? 'exit 0'}): ${stdout}\n${stderr}`));
      }
    });
  });
}

describe('the OpenAPI document', () => {
  it('lints clean: no error, no warning', { timeout: 90_000 }, async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, await (await fetch(`${cloud.url}/openapi.json`)).text());
    const report = await lint(file);
    expect(report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('is linted by the recommended rules, with only the licence rule off', () => {
    const text = readFileSync(config, 'utf8');
    expect(text).toMatch(/^extends:\n {2}- recommended$/m);
    expect(text).toMatch(/^telemetry: off$/m);
    expect([...text.matchAll(/^ {2}([a-z0-9-]+): (off|warn|error)$/gm)].map((m) => `${m[1]}: ${m[2]}`)).toEqual(['info-license: off']);
  });

  it('declares the authorizer of every operation: the bearer JWT, the device signature headers, or none', async () => {
    const doc = (await (await fetch(`${cloud.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>>;
      components: { securitySchemes: Record<string, { type: string; in?: string; name?: string }> };
    };
    const signature = ['x-device-uuid', 'x-device-nonce', 'x-device-timestamp', 'x-device-signature'];
    for (const h of signature) expect(doc.components.securitySchemes[h]).toMatchObject({ type: 'apiKey', in: 'header', name: h });
    const byOperation = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([m, op]) => [`${m.toUpperCase()} ${path}`, op.security?.map((r) => Object.keys(r).join('+'))]));
    const of = (route: string) => byOperation.find(([r]) => r === route)?.[1];
    expect(of('GET /health')).toEqual([]);
    expect(of('GET /ota/{class}/{product_hex}/{application}')).toEqual([]);
    expect(of('POST /devices/{uuid}/backup')).toEqual([signature.join('+')]);
    expect(of('PUT /admin/devices/{uuid}')).toEqual(['bearerAuth']);
    expect(byOperation.filter(([, s]) => s === undefined)).toEqual([]);
  });
});
