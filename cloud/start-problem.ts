// Why the cloud could not start, in a sentence that names what to change: a listen that failed (the
// address and the option), or a file the store or the secret needs. Shared by `fleet serve` in one
// process and by each worker of a multi-worker serve (cloud/cluster/worker.ts), so both say the same.
import { fileErrorMessage, isFileSystemError } from './file-errors.ts';

/** A listen that failed, as a sentence naming the address and what to do; undefined for other errors. */
export function listenProblem(err: unknown, host: string, port: number): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (code === 'EADDRINUSE') return `${where} is already in use by another program (another cloud?): stop it, or serve on another port with --port or PORT (0 picks a free one)`;
  if (code === 'EACCES') return `${where}: no permission to listen on port ${port} (ports below 1024 need privileges): choose a port from 1024 up with --port or PORT`;
  if (code === 'EADDRNOTAVAIL') return `${host} is not an address of this machine: choose one with --host or HOST (the default is 127.0.0.1)`;
  return undefined;
}

/** startCloudServer's failure as a sentence (listen or store file); undefined when it is neither. */
export function startProblem(err: unknown, config: { host: string; port: number; databaseUrl: string }): string | undefined {
  return listenProblem(err, config.host, config.port) ?? (isFileSystemError(err) ? `${fileErrorMessage(err, 'the store')} (DATABASE_URL is ${config.databaseUrl})` : undefined);
}
