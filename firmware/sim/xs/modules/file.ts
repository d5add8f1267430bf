// `file` on LittleFS (modules/files/file: file.js over littlefs/modLittlefs.c, documentation/files/
// files.md), on the storage partition (the board's flash folder on the host). Semantics kept:
// - new File(path) opens for reading and throws when the file is missing; new File(path, true) opens
//   for writing, creating it, without truncating (LFS_O_RDWR | LFS_O_CREAT);
// - `length`, `position`, read(ArrayBuffer|String, count) from `position` (reading past the end
//   throws "read past end of file"), write(buffer|string) at `position`, close() (lfs_file_close
//   syncs);
// - File.exists, File.delete (a boolean: whether it was there), File.rename(from, to) returning a
//   boolean, never throwing (lfs_rename replaces the destination atomically);
// - Directory.create (an existing folder is not an error), Directory.delete; Iterator lists a
//   folder's entries including "." and ".." (lfs_dir_read), folders without a `length`.
import { arrayBufferOf, bytesOf, hostCall } from '../host.ts';
import { utf8Decode } from '../../../src/core/bytes.ts';

export class File {
  #path: string;
  #handle: number | undefined;
  #length: number;
  #open = true;
  position = 0;

  constructor(path: string, write = false) {
    this.#path = path;
    if (write) {
      const opened = hostCall('fs.create', { path, keep: true }).value as number | { handle: number; size: number };
      this.#handle = typeof opened === 'number' ? opened : opened.handle;
      this.#length = typeof opened === 'number' ? 0 : opened.size;
    } else {
      const size = hostCall('fs.size', { path }).value as number | null;
      if (size === null) throw new Error('file not found');
      this.#length = size;
    }
  }

  get length(): number {
    return this.#length;
  }

  read(type: typeof ArrayBuffer | typeof String, count?: number): ArrayBuffer | string {
    if (!this.#open) throw new Error('closed');
    const n = count ?? this.#length - this.position;
    if (this.position + n > this.#length) throw new Error('read past end of file');
    const bytes = hostCall('fs.read', { path: this.#path, offset: this.position, length: n }).payload;
    this.position += bytes.length;
    return type === String ? utf8Decode(bytes) : arrayBufferOf(bytes);
  }

  write(...data: (ArrayBuffer | ArrayBufferView | string)[]): void {
    if (!this.#open || this.#handle === undefined) throw new Error('file not open for writing');
    for (const d of data) {
      const bytes = bytesOf(d);
      if (this.position > this.#length) throw new Error('write past end of file');
      hostCall('fs.write', { handle: this.#handle, at: this.position }, bytes);
      this.position += bytes.length;
      this.#length = Math.max(this.#length, this.position);
    }
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    if (this.#handle !== undefined) hostCall('fs.close', { handle: this.#handle });
  }

  static exists(path: string): boolean {
    return hostCall('fs.exists', { path }).value as boolean;
  }

  static delete(path: string): boolean {
    return hostCall('fs.remove', { path }).value as boolean;
  }

  static rename(from: string, to: string): boolean {
    try {
      hostCall('fs.rename', { from, to, mustExist: true });
      return true;
    } catch (err) {
      if ((err as Error).message.startsWith('power cut')) throw err; // after a cut nothing answers at all
      return false;
    }
  }
}

export class Directory {
  static create(path: string): void {
    hostCall('fs.mkdir', { path });
  }

  static delete(path: string): boolean {
    return hostCall('fs.rmdir', { path }).value as boolean;
  }
}

export class Iterator {
  #entries: { name: string; length?: number }[];
  #at = 0;

  constructor(path: string) {
    this.#entries = hostCall('fs.entries', { folder: path }).value as { name: string; length?: number }[];
  }

  next(): { name: string; length?: number } | undefined {
    return this.#entries[this.#at++];
  }

  [Symbol.iterator](): globalThis.Iterator<{ name: string; length?: number }> {
    return this.#entries[Symbol.iterator]();
  }
}

export default File;
