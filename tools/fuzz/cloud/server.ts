// A cloud to fuzz, in-process: SQLite in a temporary folder (or the DATABASE_URL given), logs counted.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintToken } from '../../../cloud/auth/jwt.ts';
import { loadConfig } from '../../../cloud/config.ts';
import type { LogRecord } from '../../../cloud/logging.ts';
import { startCloudServer, type RunningCloud } from '../../../cloud/server.ts';

export interface FuzzCloud {
  url: string;
  host: string;
  port: number;
  adminToken: string;
  nonSuperToken: string;
  running: RunningCloud;
  /** Records per level, and the ERROR/CRITICAL ones (at most 50 kept). */
  logCounts: Record<string, number>;
  errorLogs: LogRecord[];
  close(): Promise<void>;
}

export async function startFuzzCloud(opts: { env?: Record<string, string> } = {}): Promise<FuzzCloud> {
  const dir = mkdtempSync(join(tmpdir(), 'cloud-fuzz-'));
  const secret = createHash('sha256').update(dir).digest('hex');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: join(dir, 'cloud.sqlite'),
    JWT_SECRET: secret,
    APPCONFIG_DEPLOY_SECONDS: '1',
    APPCONFIG_REFRESH_MS: '1000',
    ...opts.env,
  });
  const logCounts: Record<string, number> = {};
  const errorLogs: LogRecord[] = [];
  const running = await startCloudServer(config, {
    sink: (r) => {
      logCounts[r.level] = (logCounts[r.level] ?? 0) + 1;
      if ((r.level === 'ERROR' || r.level === 'CRITICAL') && errorLogs.length < 50) errorLogs.push(r);
    },
  });
  const key = new TextEncoder().encode(secret);
  const url = new URL(running.url);
  return {
    url: running.url,
    host: url.hostname,
    port: Number(url.port),
    adminToken: await mintToken(key, { subject: 'fuzz', ttlSeconds: 3600 }),
    nonSuperToken: await mintToken(key, { subject: 'fuzz-user', groups: ['users'], ttlSeconds: 3600 }),
    running,
    logCounts,
    errorLogs,
    async close() {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
