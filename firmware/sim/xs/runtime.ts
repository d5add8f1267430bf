// The virtual board's side of the engine: the host's commands arrive here (docs/xs-engine.md).
// - boot {config, settings, adminPassword}: the build configuration (mc/config) is set and the
//   platform starts exactly as main.ts starts it on a board (hal/start.ts); once the core has
//   booted, its result goes to the host (app.booted).
// - event {event} + payload: something happened on the host side (socket data, a timer, a Wi-Fi
//   report); the emulated module that asked gets it (host.ts onEvent).
// - console {line}: bytes typed on UART0.
// - an empty message: a garbage collection, nothing else (the host's slot meter).
// Each answer is set on the returned object's `result` once the command's promise jobs have run.
import { startBoard, type RunningBoard } from '../../src/platform/moddable/hal/start.ts';
import { utf8Encode } from '../../src/core/bytes.ts';
import { decodeFrame, encodeFrame, toArrayBuffer } from '../wire.ts';
import { dispatchEvent, hostCall, type HostEvent } from './host.ts';
import config from './modules/mc-config.ts';

interface Command {
  type: 'boot' | 'event' | 'console' | 'status' | 'pubkey';
  config?: Record<string, unknown>;
  settings?: Record<string, unknown>;
  adminPassword?: string;
  event?: HostEvent;
  line?: string;
}

let running: RunningBoard | undefined;

function run(command: Command, payload: Uint8Array): unknown {
  switch (command.type) {
    case 'boot': {
      if (running) throw new Error('already booted');
      Object.assign(config, command.config ?? {});
      running = startBoard(config, { settings: command.settings ?? {}, ...(command.adminPassword ? { initialAdminPassword: command.adminPassword } : {}) });
      // The boot waits on the network (a scan, SNTP, the listeners) over several commands: its end
      // is reported to the host when it comes.
      running.booted.then(
        (value) => hostCall('app.booted', { ok: true, value: value ?? null }),
        (err: unknown) => hostCall('app.booted', { ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }),
      );
      return null;
    }
    case 'event':
      return dispatchEvent(command.event!, payload);
    case 'console':
      return dispatchEvent({ kind: 'serial', port: 0 }, utf8Encode(`${command.line ?? ''}\n`));
    case 'status':
      return running?.device?.status();
    case 'pubkey':
      return running?.device?.publicKeyPem();
  }
  throw new Error(`unknown command ${String((command as { type?: unknown }).type)}`);
}

declare const gc: () => void;

(globalThis as unknown as { handleCommand: (m: ArrayBuffer) => { result?: ArrayBuffer } }).handleCommand = (message) => {
  const out: { result?: ArrayBuffer } = {};
  // An empty command is the host's garbage collection (XsBoard's slot meter): nothing of the
  // firmware runs, and the crank's currentHeapCount is the live slots. It is a command and not an
  // `eval('gc()')` because each evaluated script keeps a slot alive while the firmware has
  // promises pending (docs/xs-engine.md), which a meter reading before every command would add up.
  if (message.byteLength === 0) {
    gc();
    return out;
  }
  const ok = (value: unknown) => (out.result = toArrayBuffer(encodeFrame({ ok: true, value: value ?? null })));
  const fail = (err: unknown) => (out.result = toArrayBuffer(encodeFrame({ ok: false, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) })));
  try {
    const frame = decodeFrame(new Uint8Array(message));
    Promise.resolve(run(frame.json as Command, frame.payload)).then(ok, fail);
  } catch (err) {
    fail(err);
  }
  return out;
};
