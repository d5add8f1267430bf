// Debian's ser2net (4.x) as a third-party RFC 2217 server (the tests, npm run bench:flash): a plain process (never the
// system service) with its YAML configuration in a temporary folder, listening on 127.0.0.1 only, in
// front of one end of a socat pseudo-terminal pair. CI installs it (.ci/run); a machine without it
// fails the test with this message rather than skipping it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freeLoopbackPort } from '../ports.ts';
import { stopChild } from '../child-process.ts';

export interface Ser2net {
  url: string;
  stop(): Promise<void>;
}

export function ser2netBinary(): string {
  for (const p of ['/usr/sbin/ser2net', '/usr/bin/ser2net', '/usr/local/sbin/ser2net']) if (existsSync(p)) return p;
  throw new Error("ser2net is needed for the RFC 2217 client's tests against a third-party server: apt-get install -y ser2net (CI installs it)");
}

/** Serves `device` (a pseudo-terminal) over RFC 2217 at `serial` settings, e.g. 9600e72. */
export async function startSer2net(dir: string, device: string, serial = '115200n81'): Promise<Ser2net> {
  const bin = ser2netBinary();
  const port = await freeLoopbackPort();
  const config = join(dir, 'ser2net.yaml');
  writeFileSync(
    config,
    ['%YAML 1.1', '---', 'connection: &bench', `  accepter: telnet(rfc2217),tcp,127.0.0.1,${port}`, `  connector: serialdev,${device},${serial},local`, '  options:', '    kickolduser: true', ''].join('\n'),
  );
  // -n: stay in the foreground; -u: no UUCP lock files in /var/lock.
  const child: ChildProcess = spawn(bin, ['-n', '-u', '-c', config, '-P', join(dir, 'ser2net.pid')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (c) => (output += c));
  child.stderr?.on('data', (c) => (output += c));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`ser2net exited with ${child.exitCode}: ${output}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`ser2net did not listen on 127.0.0.1:${port} within 10 s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `rfc2217://127.0.0.1:${port}`,
    stop: () => stopChild(child),
  };
}
