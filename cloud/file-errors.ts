// A file a user named (a rig, an image, a key, a log, an output) that cannot be read or written:
// a usage error (fleet exit 2) whose message names the file and says what to do, never a bare
// `ENOENT: no such file or directory` (README exit codes).
import { readFileSync } from 'node:fs';
import { EXIT_CODES } from './exit-codes.ts';

/** A Node file-system error: it names the call and (but for a read of an open file) the path. */
export type FileSystemError = NodeJS.ErrnoException & { code: string; syscall: string; path: string };

export class FileArgumentError extends Error {
  override name = 'FileArgumentError';
  readonly exitCode = EXIT_CODES.usage;
}

export function isFileSystemError(err: unknown): err is FileSystemError {
  const e = err as Partial<FileSystemError> | null;
  return err instanceof Error && typeof e?.code === 'string' && typeof e.syscall === 'string' && typeof e.path === 'string';
}

const VERBS: Record<string, string> = { open: 'open', read: 'read', write: 'write', mkdir: 'create the folder', scandir: 'list', stat: 'find', lstat: 'find', rename: 'rename', unlink: 'remove', copyfile: 'copy', chmod: 'change the mode of' };

/** Why, in words, and what to do about it. */
export function fileProblem(err: FileSystemError): string {
  switch (err.code) {
    case 'ENOENT':
      return 'no such file or folder; check the path';
    case 'EISDIR':
      return 'it is a folder; give a file';
    case 'ENOTDIR':
      return 'a part of the path is a file, not a folder; check the path';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied; check its permissions, or choose another path';
    case 'EEXIST':
      return 'a file of that name is in the way; remove it or choose another path';
    case 'ENOSPC':
      return 'the disk is full';
    case 'EROFS':
      return 'the file system is read-only; choose another path';
    default:
      return err.message;
  }
}

/** "the rig file: cannot open /x.json: no such file or folder; check the path" */
export function fileErrorMessage(err: FileSystemError, what?: string): string {
  return `${what ? `${what}: ` : ''}cannot ${VERBS[err.syscall] ?? 'use'} ${err.path}: ${fileProblem(err)}`;
}

/** readFileSync of a file a user named; a FileArgumentError that names it when it cannot be read. */
export function readFileArgument(path: string, what?: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const e = err as Partial<FileSystemError>;
    if (!(err instanceof Error) || typeof e.code !== 'string' || typeof e.syscall !== 'string') throw err;
    // A read of what turned out to be a folder (EISDIR) names no path: the caller knows it.
    e.path ??= path;
    throw new FileArgumentError(fileErrorMessage(err as FileSystemError, what));
  }
}
