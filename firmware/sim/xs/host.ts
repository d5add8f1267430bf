// Inside XS: the emulated Moddable modules reach the virtual board's host process here. Calls are
// synchronous (the worker's issueCommand blocks XS until the host answers, docs/xs-engine.md) and the
// host never waits on a network peer to answer one. What happens later (socket data, timers, Wi-Fi
// reports) comes back as an event command, dispatched to the module that asked (`onEvent`).
import { utf8Encode } from '../../src/core/bytes.ts';
import { decodeFrame, encodeFrame, toArrayBuffer } from '../wire.ts';

declare const issueCommand: (message: ArrayBuffer) => ArrayBuffer;

export class HostError extends Error {
  override name = 'HostError';
}

export interface HostReply {
  value: any;
  payload: Uint8Array;
}

export function hostCall(op: string, args: Record<string, unknown> = {}, payload?: Uint8Array): HostReply {
  const reply = decodeFrame(new Uint8Array(issueCommand(toArrayBuffer(encodeFrame({ op, ...args }, payload)))));
  const head = reply.json as { ok: boolean; value?: unknown; error?: string };
  if (!head.ok) throw new HostError(head.error ?? `host call ${op} failed`);
  return { value: head.value, payload: reply.payload };
}

/** An event from the host: its kind names the module, `id` the object, the rest is the module's. */
export interface HostEvent {
  kind: string;
  id?: number;
  [field: string]: unknown;
}

type EventHandler = (event: HostEvent, payload: Uint8Array) => void;
const handlers = new Map<string, EventHandler>();

/** Registers the handler of one kind of event (one per module). */
export function onEvent(kind: string, handler: EventHandler): void {
  handlers.set(kind, handler);
}

export function dispatchEvent(event: HostEvent, payload: Uint8Array): void {
  const handler = handlers.get(event.kind);
  if (!handler) throw new Error(`no module takes ${event.kind} events`);
  handler(event, payload);
}

/** Ids for host-side objects that XS names (sockets, timers, listeners). */
let nextId = 1;
export function newId(): number {
  return nextId++;
}

/** The exact bytes of a buffer argument, as the SDK's natives read them (xsmcGetBufferReadable). */
export function bytesOf(data: ArrayBuffer | ArrayBufferView | string): Uint8Array {
  if (typeof data === 'string') return utf8Encode(data); // xsmcToString: a string's UTF-8 bytes
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError('not a buffer');
}

/** A fresh ArrayBuffer holding these bytes (what a native returns). */
export function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  return toArrayBuffer(bytes);
}
