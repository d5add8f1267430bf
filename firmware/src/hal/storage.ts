// Flash file system of the configuration partition. Synchronous, like Moddable's `file` module.
// Paths are absolute ("/backup.json", "/records/clients/<uuid>"); the layout, the atomic
// replacement every writer uses and what a power cut may leave are in docs/storage.md.

export interface FileWriter {
  write(chunk: Uint8Array): void;
  /** Makes what was written durable (a sync); until then a power cut may leave any prefix of it. */
  close(): void;
}

export interface Storage {
  /** Size in bytes, or null when there is no such file. */
  size(path: string): number | null;
  /** Up to `length` bytes from `offset`; fewer at the end of the file. */
  read(path: string, offset: number, length: number): Uint8Array;
  /** Creates (or truncates) a file; parent folders are created as needed. */
  create(path: string): FileWriter;
  /** Atomic replace: after a power cut either the old or the new file is at `to`. */
  rename(from: string, to: string): void;
  remove(path: string): boolean;
  /** Paths of the files directly inside a folder, sorted. */
  list(folder: string): string[];
}
