// Flash as a Map of paths to bytes. Writes become visible on close, like a file written then synced.
import type { FileWriter, Storage } from '../../hal/storage.ts';
import { concatBytes } from '../../core/bytes.ts';

export class MemoryStorage implements Storage {
  readonly files = new Map<string, Uint8Array>();

  size(path: string): number | null {
    return this.files.get(path)?.length ?? null;
  }

  read(path: string, offset: number, length: number): Uint8Array {
    const f = this.files.get(path);
    if (!f) throw new Error(`no such file: ${path}`);
    return f.slice(offset, Math.min(offset + length, f.length));
  }

  create(path: string): FileWriter {
    const chunks: Uint8Array[] = [];
    this.files.set(path, new Uint8Array(0));
    return {
      write: (chunk) => void chunks.push(chunk.slice()),
      close: () => void this.files.set(path, concatBytes(...chunks)),
    };
  }

  rename(from: string, to: string): void {
    const f = this.files.get(from);
    if (!f) throw new Error(`no such file: ${from}`);
    this.files.set(to, f);
    this.files.delete(from);
  }

  remove(path: string): boolean {
    return this.files.delete(path);
  }

  list(folder: string): string[] {
    const prefix = folder.endsWith('/') ? folder : folder + '/';
    return [...this.files.keys()].filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/')).sort();
  }
}
