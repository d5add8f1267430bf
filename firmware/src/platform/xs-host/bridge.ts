// Calls from the firmware (inside XS) to its host: synchronous, through the worker's issueCommand
// (docs/xs-engine.md). Each call is one frame out and one frame back; a host-side failure comes back
// as {"ok": false, "error": …} and is thrown here.
import { decodeFrame, encodeFrame, toArrayBuffer } from '../../../sim/wire.ts';

declare const issueCommand: (message: ArrayBuffer) => ArrayBuffer;

export class HostError extends Error {
  override name = 'HostError';
}

export function hostCall(op: string, args: Record<string, unknown> = {}, payload?: Uint8Array): { value: any; payload: Uint8Array } {
  const reply = decodeFrame(new Uint8Array(issueCommand(toArrayBuffer(encodeFrame({ op, ...args }, payload)))));
  const head = reply.json as { ok: boolean; value?: unknown; error?: string };
  if (!head.ok) throw new HostError(head.error ?? `host call ${op} failed`);
  return { value: head.value, payload: reply.payload };
}
