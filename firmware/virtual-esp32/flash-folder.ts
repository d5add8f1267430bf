// The storage partition of a virtual board (its file system: backup, records, event log): a folder
// on the host beside the board's flash image file (flash-image.ts), that survives reboots. Paths
// from the firmware are absolute ("/backup.json") and must stay inside the folder. The app slots,
// otadata and the rest of the flash are in the image file; OTA goes there (ota-slots.ts).
//
// With a PowerSwitch (options.power) the bench can cut the board's power during any create, write,
// close, rename or remove, leaving what a cut leaves on a board's flash (docs/storage.md, "Power
// cuts", the same model as the memory platform's MemoryStorage): a file being written holds some
// prefix of what was written to it, a create may or may not have happened, a rename is atomic (the
// source possibly still there), a remove happened or not. After the cut every operation throws.
import { closeSync, copyFileSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import type { MutatingOp, PowerSwitch } from '../src/platform/memory/power-cut.ts';

export interface FlashFolderOptions {
  /** Cuts the power at a chosen operation (power-cut tests); none: the power never goes. */
  power?: PowerSwitch;
}

export class FlashFolder {
  private readonly handles = new Map<number, { fd: number; path: string; written: number }>();
  private nextHandle = 1;

  constructor(
    readonly root: string,
    private readonly options: FlashFolderOptions = {},
  ) {}

  /** Host path of a firmware path; refuses anything that would leave the folder, or name a folder as a file. */
  resolve(path: unknown): string {
    if (typeof path !== 'string' || !path.startsWith('/') || path.includes('\0') || path.split('/').some((s) => s === '..' || s === '.')) {
      throw new Error(`bad flash path ${JSON.stringify(path)}`);
    }
    const full = resolve(join(this.root, path));
    if (full !== resolve(this.root) && !full.startsWith(resolve(this.root) + sep)) throw new Error(`bad flash path ${JSON.stringify(path)}`);
    return full;
  }

  /** Answers the fs.* host calls; undefined for any other op. */
  op(c: Record<string, any>, payload: Uint8Array): { value?: unknown; payload?: Uint8Array } | undefined {
    if (typeof c.op === 'string' && c.op.startsWith('fs.')) this.options.power?.check();
    switch (c.op) {
      case 'fs.size': {
        const p = this.resolve(c.path);
        return { value: existsSync(p) && statSync(p).isFile() ? statSync(p).size : null };
      }
      case 'fs.read': {
        const fd = openSync(this.resolve(c.path), 'r');
        try {
          const buf = Buffer.alloc(Math.max(0, Math.min(c.length, 1 << 20)));
          const n = readSync(fd, buf, 0, buf.length, c.offset);
          return { payload: buf.subarray(0, n) };
        } finally {
          closeSync(fd);
        }
      }
      case 'fs.create': {
        const p = this.resolve(c.path);
        mkdirSync(dirname(p), { recursive: true });
        if (this.cuts('create', c.path)) {
          if (this.options.power!.pick(2) === 1) closeSync(openSync(p, 'w'));
          this.die();
        }
        const handle = this.nextHandle++;
        // keep: LittleFS's open for writing (LFS_O_RDWR | LFS_O_CREAT) keeps an existing file's bytes.
        const kept = c.keep === true && existsSync(p) && statSync(p).isFile() ? statSync(p).size : null;
        this.handles.set(handle, { fd: openSync(p, kept === null ? 'w' : 'r+'), path: c.path, written: 0 });
        if (kept !== null) return { value: { handle, size: kept } };
        return { value: c.keep === true ? { handle, size: 0 } : handle };
      }
      case 'fs.write': {
        const h = this.handles.get(c.handle);
        if (h === undefined) throw new Error('file not open');
        const cut = this.cuts('write', h.path);
        // at: where the write goes (a file kept open for writing is written at its position).
        if (typeof c.at === 'number') writeSync(h.fd, payload, 0, payload.length, c.at);
        else writeSync(h.fd, payload);
        h.written += payload.length;
        if (cut) this.die();
        return {};
      }
      case 'fs.close': {
        const h = this.handles.get(c.handle);
        if (h === undefined) throw new Error('file not open');
        if (this.cuts('close', h.path)) this.die();
        fsyncSync(h.fd);
        closeSync(h.fd);
        this.handles.delete(c.handle);
        return {};
      }
      case 'fs.rename': {
        const from = this.resolve(c.from);
        const to = this.resolve(c.to);
        mkdirSync(dirname(to), { recursive: true });
        if (this.cuts('rename', c.from)) {
          const outcome = existsSync(from) ? this.options.power!.pick(3) : 0;
          if (outcome === 1) renameSync(from, to);
          if (outcome === 2) copyFileSync(from, to);
          this.die();
        }
        renameSync(from, to);
        return {};
      }
      case 'fs.remove': {
        const p = this.resolve(c.path);
        const cut = this.cuts('remove', c.path);
        const had = existsSync(p);
        if (had && (!cut || this.options.power!.pick(2) === 1)) rmSync(p);
        if (cut) this.die();
        return { value: had };
      }
      case 'fs.exists':
        return { value: existsSync(this.resolve(c.path)) };
      case 'fs.mkdir': {
        const p = this.resolve(c.path);
        if (existsSync(p) && !statSync(p).isDirectory()) throw new Error(`${c.path} is a file`);
        mkdirSync(p, { recursive: true });
        return {};
      }
      case 'fs.rmdir': {
        const p = this.resolve(c.path);
        if (!existsSync(p) || !statSync(p).isDirectory() || readdirSync(p).length > 0) return { value: false };
        rmSync(p, { recursive: true });
        return { value: true };
      }
      case 'fs.entries': {
        // lfs_dir_read: "." and ".." first, then each entry; a folder has no length.
        const dir = this.resolve(c.folder);
        if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`no folder ${c.folder}`);
        const entries: { name: string; length?: number }[] = [{ name: '.' }, { name: '..' }];
        for (const d of readdirSync(dir, { withFileTypes: true })) entries.push(d.isFile() ? { name: d.name, length: statSync(join(dir, d.name)).size } : { name: d.name });
        return { value: entries };
      }
      case 'fs.list': {
        const dir = this.resolve(c.folder);
        if (!existsSync(dir)) return { value: [] };
        const base = (c.folder as string).replace(/\/+$/, '');
        return { value: readdirSync(dir, { withFileTypes: true }).filter((d) => d.isFile()).map((d) => `${base}/${d.name}`).sort() };
      }
    }
    return undefined;
  }

  closeAll(): void {
    for (const { fd } of this.handles.values()) closeSync(fd);
    this.handles.clear();
  }

  private cuts(op: MutatingOp, path: string): boolean {
    return this.options.power?.step(op, path) ?? false;
  }

  /** The power is gone: every file still open holds some prefix of what was written to it. */
  private die(): never {
    const power = this.options.power!;
    for (const h of this.handles.values()) ftruncateSync(h.fd, power.pick(h.written + 1));
    throw power.error();
  }
}
