// The flash of a virtual board: a folder on the host that survives reboots. Paths from the firmware
// are absolute ("/backup.json") and must stay inside the folder.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';

export class FlashFolder {
  private readonly handles = new Map<number, number>();
  private nextHandle = 1;
  private otaImage: { fd: number; size: number; written: number } | null = null;

  constructor(readonly root: string) {}

  /** Host path of a firmware path; refuses anything that would leave the folder. */
  resolve(path: unknown): string {
    if (typeof path !== 'string' || !path.startsWith('/') || path.includes('\0') || path.split('/').includes('..')) {
      throw new Error(`bad flash path ${JSON.stringify(path)}`);
    }
    const full = resolve(join(this.root, path));
    if (full !== resolve(this.root) && !full.startsWith(resolve(this.root) + sep)) throw new Error(`bad flash path ${JSON.stringify(path)}`);
    return full;
  }

  /** Answers the fs.* host calls; undefined for any other op. */
  op(c: Record<string, any>, payload: Uint8Array): { value?: unknown; payload?: Uint8Array } | undefined {
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
        const handle = this.nextHandle++;
        this.handles.set(handle, openSync(p, 'w'));
        return { value: handle };
      }
      case 'fs.write': {
        const fd = this.handles.get(c.handle);
        if (fd === undefined) throw new Error('file not open');
        writeSync(fd, payload);
        return {};
      }
      case 'fs.close': {
        const fd = this.handles.get(c.handle);
        if (fd === undefined) throw new Error('file not open');
        fsyncSync(fd);
        closeSync(fd);
        this.handles.delete(c.handle);
        return {};
      }
      case 'fs.rename': {
        const to = this.resolve(c.to);
        mkdirSync(dirname(to), { recursive: true });
        renameSync(this.resolve(c.from), to);
        return {};
      }
      case 'fs.remove': {
        const p = this.resolve(c.path);
        if (!existsSync(p)) return { value: false };
        rmSync(p);
        return { value: true };
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

  /** The inactive OTA partition, as a file next to the flash folder's content. */
  ota(op: string, c: Record<string, any>, payload: Uint8Array): { value?: unknown } {
    const path = this.resolve('/.ota/next.bin');
    if (op === 'ota.begin') {
      mkdirSync(dirname(path), { recursive: true });
      if (this.otaImage) closeSync(this.otaImage.fd);
      this.otaImage = { fd: openSync(path, 'w'), size: c.size, written: 0 };
      return {};
    }
    if (!this.otaImage) throw new Error('no OTA in progress');
    if (op === 'ota.write') {
      this.otaImage.written += payload.length;
      if (this.otaImage.written > this.otaImage.size) throw new Error('OTA image larger than announced');
      writeSync(this.otaImage.fd, payload);
      return {};
    }
    closeSync(this.otaImage.fd);
    const done = this.otaImage;
    this.otaImage = null;
    if (op === 'ota.abort') {
      rmSync(path, { force: true });
      return {};
    }
    if (done.written !== done.size) throw new Error('OTA image shorter than announced');
    renameSync(path, this.resolve('/.ota/boot.bin'));
    return {};
  }

  closeAll(): void {
    for (const fd of this.handles.values()) closeSync(fd);
    this.handles.clear();
    if (this.otaImage) closeSync(this.otaImage.fd);
    this.otaImage = null;
  }
}
