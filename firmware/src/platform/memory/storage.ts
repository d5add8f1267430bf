// Flash as a Map of paths to bytes. Writes become durable on close, like a file written then synced.
// With a PowerSwitch the power can be cut during any create, write, close, rename or remove; what a
// cut leaves is the model of docs/storage.md ("Power cuts"): a file being written holds any prefix
// of what was written to it, a create may or may not have created (or truncated) its file, a rename
// is atomic (old or new at its destination, the source possibly still there), a remove happened or
// not. After the cut every operation throws until the switch is restored.
import type { FileWriter, Storage } from '../../hal/storage.ts';
import { concatBytes } from '../../core/bytes.ts';
import type { PowerSwitch } from './power-cut.ts';

interface OpenFile {
  path: string;
  chunks: Uint8Array[];
}

export class MemoryStorage implements Storage {
  readonly files = new Map<string, Uint8Array>();
  private readonly open = new Set<OpenFile>();

  constructor(public power: PowerSwitch | null = null) {}

  size(path: string): number | null {
    this.power?.check();
    return this.files.get(path)?.length ?? null;
  }

  read(path: string, offset: number, length: number): Uint8Array {
    this.power?.check();
    const f = this.files.get(path);
    if (!f) throw new Error(`no such file: ${path}`);
    return f.slice(offset, Math.min(offset + length, f.length));
  }

  create(path: string): FileWriter {
    if (this.cuts('create', path)) {
      if (this.power!.pick(2) === 1) this.files.set(path, new Uint8Array(0));
      this.die();
    }
    const file: OpenFile = { path, chunks: [] };
    this.files.set(path, new Uint8Array(0));
    this.open.add(file);
    return {
      write: (chunk) => {
        this.alive(file);
        const cut = this.cuts('write', path);
        file.chunks.push(chunk.slice());
        if (cut) this.die();
      },
      close: () => {
        this.alive(file);
        if (this.cuts('close', path)) this.die();
        this.open.delete(file);
        this.files.set(path, concatBytes(...file.chunks));
      },
    };
  }

  rename(from: string, to: string): void {
    const cut = this.cuts('rename', from);
    const f = this.files.get(from);
    if (!f) {
      if (cut) this.die();
      throw new Error(`no such file: ${from}`);
    }
    const outcome = cut ? this.power!.pick(3) : 1;
    if (outcome >= 1) this.files.set(to, f);
    if (outcome === 1) this.files.delete(from);
    if (cut) this.die();
  }

  remove(path: string): boolean {
    const cut = this.cuts('remove', path);
    const had = this.files.has(path);
    if (!cut || this.power!.pick(2) === 1) this.files.delete(path);
    if (cut) this.die();
    return had;
  }

  list(folder: string): string[] {
    this.power?.check();
    const prefix = folder.endsWith('/') ? folder : folder + '/';
    return [...this.files.keys()].filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/')).sort();
  }

  /** Power back on after a cut: files left open by the dead firmware stay as the cut left them. */
  restorePower(): void {
    this.open.clear();
    this.power?.restore();
  }

  private cuts(op: Parameters<PowerSwitch['step']>[0], path: string): boolean {
    return this.power?.step(op, path) ?? false;
  }

  private alive(file: OpenFile): void {
    this.power?.check();
    if (!this.open.has(file)) throw new Error(`file not open: ${file.path}`);
  }

  /** The power is gone: every file still open holds some prefix of what was written to it. */
  private die(): never {
    for (const file of this.open) {
      const bytes = concatBytes(...file.chunks);
      this.files.set(file.path, bytes.slice(0, this.power!.pick(bytes.length + 1)));
    }
    this.open.clear();
    throw this.power!.error();
  }
}
