// The Storage HAL on LittleFS: Moddable's `file` module over modules/files/file/littlefs
// (manifest_littlefs.json; the "storage" partition of firmware/partitions.csv, found by label with
// esp_partition_find_first). What modLittlefs.c does that this module relies on or works around:
// - `File.rename` returns a boolean (lfs_rename's result) and never throws: it is checked here.
//   lfs_rename replaces an existing destination atomically, which every writer relies on (docs/storage.md).
// - `new File(path, true)` opens with LFS_O_RDWR | LFS_O_CREAT, without LFS_O_TRUNC: create() deletes
//   first, or a shorter new content would keep the old file's tail.
// - `read` throws "read past end of file" at the end: reads are clipped to the length first.
// - The directory iterator returns "." and ".." (lfs_dir_read) and folders without a `length`.
// - `close` is lfs_file_close, which syncs: the HAL's FileWriter.close() durability.
import { Directory, File, Iterator } from 'file';
import type { FileWriter, Storage } from '../../../hal/storage.ts';
import { asBuffer } from './buffers.ts';

export class FlashError extends Error {
  override name = 'FlashError';
}

function parentFolders(path: string): string[] {
  const parts = path.split('/').filter((p) => p !== '');
  const folders: string[] = [];
  for (let i = 1; i < parts.length; i++) folders.push(`/${parts.slice(0, i).join('/')}`);
  return folders;
}

export class LittleFsStorage implements Storage {
  /** The paths of the core ("/records/…") under the file system's root (config "file.root"). */
  private readonly root: string;

  constructor(root = '/') {
    this.root = root.replace(/\/+$/, '');
  }

  private at(path: string): string {
    return this.root + path;
  }

  size(path: string): number | null {
    if (!File.exists(this.at(path))) return null;
    const file = new File(this.at(path));
    try {
      return file.length;
    } finally {
      file.close();
    }
  }

  read(path: string, offset: number, length: number): Uint8Array {
    const file = new File(this.at(path));
    try {
      const available = file.length - offset;
      if (available <= 0 || length <= 0) return new Uint8Array(0);
      file.position = offset;
      return new Uint8Array(file.read(ArrayBuffer, Math.min(length, available)));
    } finally {
      file.close();
    }
  }

  create(path: string): FileWriter {
    for (const folder of parentFolders(path)) Directory.create(this.at(folder)); // LFS_ERR_EXIST is ignored
    File.delete(this.at(path)); // truncate: see the header
    const file = new File(this.at(path), true);
    return {
      // xs_file_write takes any buffer (xsmcGetBufferReadable): no copy of the chunk.
      write: (chunk) => file.write(asBuffer(chunk)),
      close: () => file.close(),
    };
  }

  rename(from: string, to: string): void {
    if (!File.rename(this.at(from), this.at(to))) throw new FlashError(`rename ${from} -> ${to} failed`);
  }

  remove(path: string): boolean {
    return File.delete(this.at(path));
  }

  list(folder: string): string[] {
    if (!File.exists(this.at(folder))) return [];
    const prefix = folder.endsWith('/') ? folder : `${folder}/`;
    const paths: string[] = [];
    const entries = new Iterator(this.at(folder));
    for (let entry = entries.next(); entry !== undefined; entry = entries.next()) {
      if (entry.length === undefined || entry.name === '.' || entry.name === '..') continue;
      paths.push(prefix + entry.name);
    }
    return paths.sort();
  }
}
