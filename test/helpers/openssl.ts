// The openssl command line, as a user makes and checks Secure Boot v2 keys with it (docs/secure-boot.md):
// the real binary (CI installs it, .ci/run), never a library of ours.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

export interface OpensslRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function openssl(args: string[]): OpensslRun {
  const r = spawnSync('openssl', args, { encoding: 'utf8' });
  if (r.error) throw new Error(`openssl could not be run (is it installed?): ${r.error.message}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function mustRun(args: string[]): void {
  const r = openssl(args);
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
}

/** `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:<bits>` into dir/name, and its public key into dir/<name>.pub.pem. */
export function opensslRsaKey(dir: string, name: string, bits = 3072, extra: string[] = []): { key: string; pub: string } {
  const key = join(dir, name);
  const pub = `${key}.pub.pem`;
  mustRun(['genpkey', '-algorithm', 'RSA', '-pkeyopt', `rsa_keygen_bits:${bits}`, ...extra, '-out', key]);
  mustRun(['pkey', '-in', key, ...(extra.includes('-pass') ? ['-passin', extra[extra.indexOf('-pass') + 1]!] : []), '-pubout', '-out', pub]);
  return { key, pub };
}

/** An EC P-256 private key: what Secure Boot v2 on an ESP32-S3 cannot use. */
export function opensslEcKey(dir: string, name: string): string {
  const key = join(dir, name);
  mustRun(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', key]);
  return key;
}
