// The Node side of the channel between a virtual board's firmware and its chip (wire format:
// firmware/sdk-host/natives/fw_host.h; the list: chip-calls.ts). Calls arrive one at a time and are
// answered in order, each by the handler of its name; an error a handler throws goes back as the
// call's error status (the natives turn it into an XS exception, or errno for the network shim).
import type { Readable, Writable } from 'node:stream';
import { CHIP_CALLS, CHIP_EVENTS, type ChipCallHandlers, type ChipCallName, type ChipEventFields, type ChipEventName, type Field } from './chip-calls.ts';

const HEADER_BYTES = 8;
/** No call carries more than an OTA write or a flash chunk; a longer frame is a broken channel. */
const MAX_FRAME_BYTES = 1024 * 1024;

const byId = new Map<number, ChipCallName>(Object.entries(CHIP_CALLS).map(([name, spec]) => [spec.id, name as ChipCallName]));

export function encodeFields(fields: readonly Field[], values: readonly unknown[]): Buffer {
  if (values.length !== fields.length) throw new Error(`expected ${fields.length} fields, got ${values.length}`);
  const parts: Buffer[] = [];
  fields.forEach((field, i) => {
    const value = values[i];
    if (field === 'int') {
      const b = Buffer.alloc(4);
      b.writeInt32LE(value as number);
      parts.push(b);
    } else if (field === 'bool') {
      parts.push(Buffer.from([value ? 1 : 0]));
    } else {
      const body = field === 'string' ? Buffer.from(value as string, 'utf8') : Buffer.from(value as Uint8Array);
      const length = Buffer.alloc(4);
      length.writeUInt32LE(body.length);
      parts.push(length, body);
      if (field === 'string') parts.push(Buffer.from([0]));
    }
  });
  return Buffer.concat(parts);
}

export function decodeFields(fields: readonly Field[], payload: Buffer): unknown[] {
  let at = 0;
  const need = (n: number) => {
    if (at + n > payload.length) throw new Error('a field runs past the end of its frame');
  };
  return fields.map((field) => {
    if (field === 'int') {
      need(4);
      at += 4;
      return payload.readInt32LE(at - 4);
    }
    if (field === 'bool') {
      need(1);
      return payload[at++] !== 0;
    }
    need(4);
    const n = payload.readUInt32LE(at);
    at += 4;
    need(n + (field === 'string' ? 1 : 0));
    const body = payload.subarray(at, at + n);
    at += n + (field === 'string' ? 1 : 0);
    return field === 'string' ? body.toString('utf8') : new Uint8Array(body);
  });
}

function frame(code: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(payload.length + 4, 0);
  header.writeUInt16LE(code, 4);
  return Buffer.concat([header, payload]);
}

export class ChipChannel {
  private pending: Buffer = Buffer.alloc(0);
  private queue: Promise<void> = Promise.resolve();
  private closed = false;
  /** The last calls ("<name>"), for diagnosing a board that seems stuck. */
  readonly trace: string[] = [];

  constructor(
    private readonly calls: Readable & Writable,
    private readonly events: Writable,
    private readonly handlers: ChipCallHandlers,
    private readonly onError: (err: Error) => void,
  ) {
    calls.on('data', (chunk: Buffer) => this.receive(chunk));
    calls.on('error', () => undefined);
    events.on('error', () => undefined);
  }

  close(): void {
    this.closed = true;
  }

  /** Raises an event on the chip (delivered when the firmware's main loop next runs). */
  emit<N extends ChipEventName>(name: N, ...fields: ChipEventFields<N>): void {
    if (this.closed) return;
    const spec = CHIP_EVENTS[name];
    this.events.write(frame(spec.id, encodeFields(spec.fields, fields)));
  }

  private receive(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32LE(0);
      if (length < 4 || length > MAX_FRAME_BYTES) return this.fail(new Error(`a call frame of ${length} bytes`));
      if (this.pending.length < 4 + length) break;
      const id = this.pending.readUInt16LE(4);
      const payload = this.pending.subarray(HEADER_BYTES, 4 + length);
      this.pending = this.pending.subarray(4 + length);
      this.queue = this.queue.then(() => this.answer(id, payload));
    }
  }

  private fail(err: Error): void {
    this.closed = true;
    this.onError(err);
  }

  private async answer(id: number, payload: Buffer): Promise<void> {
    const name = byId.get(id);
    let reply: Buffer;
    try {
      if (!name) throw new Error(`unknown chip call ${id}`);
      this.trace.push(name);
      if (this.trace.length > 400) this.trace.shift();
      const spec = CHIP_CALLS[name];
      const handler = this.handlers[name] as (...args: unknown[]) => unknown;
      const result = (await handler(...decodeFields(spec.args, payload))) as unknown[];
      reply = frame(0, encodeFields(spec.result, result));
    } catch (err) {
      reply = frame(1, encodeFields(['string'], [err instanceof Error ? err.message : String(err)]));
    }
    if (!this.closed) this.calls.write(reply);
  }
}
